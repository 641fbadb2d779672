/* SPDX-License-Identifier: Apache-2.0 */
/* The Secret Service store of secret-store.h (docs/design/secrets.md "The Secret Service"): each
 * secret is one item of the service's default collection, with the attributes
 * {"application": "cordon", "name": NAME}, spoken to over the session bus with libsystemd's
 * sd-bus. libsystemd.so.0 is loaded with dlopen() when a secret is first needed and never
 * otherwise: a run that uses no secret, which is nearly every run, pays nothing for it. */
#include "secrets/secret-store.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#define SS_BUS_NAME "org.freedesktop.secrets"
#define SS_PATH "/org/freedesktop/secrets"
#define SS_SERVICE "org.freedesktop.Secret.Service"
#define SS_ITEM "org.freedesktop.Secret.Item"
#define SS_DEFAULT_COLLECTION "/org/freedesktop/secrets/aliases/default"
/* A service that does not answer within this fails the operation rather than hanging a launch. */
#define SS_CALL_TIMEOUT_USEC (10ULL * 1000 * 1000)

/* ---- libsystemd, loaded on first use -------------------------------------------------------- */

#define SD_BUS_FUNCTIONS(X)                                                                       \
        X(sd_bus_open_user)                                                                       \
        X(sd_bus_set_method_call_timeout)                                                         \
        X(sd_bus_flush_close_unref)                                                               \
        X(sd_bus_call_method)                                                                     \
        X(sd_bus_call)                                                                            \
        X(sd_bus_get_property)                                                                    \
        X(sd_bus_message_new_method_call)                                                         \
        X(sd_bus_message_append)                                                                  \
        X(sd_bus_message_append_array)                                                            \
        X(sd_bus_message_open_container)                                                          \
        X(sd_bus_message_close_container)                                                         \
        X(sd_bus_message_enter_container)                                                         \
        X(sd_bus_message_exit_container)                                                          \
        X(sd_bus_message_read)                                                                    \
        X(sd_bus_message_read_array)                                                              \
        X(sd_bus_message_read_strv)                                                               \
        X(sd_bus_message_skip)                                                                    \
        X(sd_bus_message_unref)                                                                   \
        X(sd_bus_error_free)

static struct sd_api {
#define SD_FIELD(f) __typeof__(f) *f;
        SD_BUS_FUNCTIONS(SD_FIELD)
#undef SD_FIELD
        bool loaded;
        char why[160]; /* why not loaded */
} sd;
static pthread_once_t sd_once = PTHREAD_ONCE_INIT;

static void sd_load(void) {
        /* RTLD_NODELETE: the library stays for the life of the process (its functions are
         * called from several threads; it is never closed). */
        void *h = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!h) {
                const char *e = dlerror();
                (void) snprintf(sd.why, sizeof(sd.why), "cannot load libsystemd.so.0 (%s); "
                                "install libsystemd0", e ? e : "not found");
                return;
        }
#define SD_LOOKUP(f)                                                                              \
        if (!(sd.f = (__typeof__(f) *) dlsym(h, #f))) {                                           \
                (void) snprintf(sd.why, sizeof(sd.why), "libsystemd.so.0 has no %s; it is too "  \
                                "old (systemd 240 or later is needed)", #f);                      \
                return;                                                                           \
        }
        SD_BUS_FUNCTIONS(SD_LOOKUP)
#undef SD_LOOKUP
        sd.loaded = true;
}

/* ---- a connection ----------------------------------------------------------------------------- */

struct secret_service {
        sd_bus *bus;
        char *session; /* the "plain" session's object path, once opened */
};

void secret_service_close(secret_service *s) {
        if (!s)
                return;
        if (s->bus)
                (void) sd.sd_bus_flush_close_unref(s->bus);
        free(s->session);
        free(s);
}

/* The name is owned now, or the bus would start its owner on the first call (an activatable
 * service: the user's keyring, not running yet, still holds the user's secrets). */
static int service_on_bus(sd_bus *bus) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int has = 0;
        int r = sd.sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                      "org.freedesktop.DBus", "NameHasOwner", &e, &reply, "s",
                                      SS_BUS_NAME);
        if (r >= 0)
                r = sd.sd_bus_message_read(reply, "b", &has);
        reply = sd.sd_bus_message_unref(reply);
        sd.sd_bus_error_free(&e);
        if (r < 0 || has)
                return r < 0 ? r : 1;
        char **names = NULL;
        r = sd.sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                  "org.freedesktop.DBus", "ListActivatableNames", &e, &reply, "");
        if (r >= 0)
                r = sd.sd_bus_message_read_strv(reply, &names);
        (void) sd.sd_bus_message_unref(reply);
        sd.sd_bus_error_free(&e);
        for (size_t i = 0; names && names[i]; i++) {
                has |= strcmp(names[i], SS_BUS_NAME) == 0;
                free(names[i]);
        }
        free(names);
        return r < 0 ? r : has;
}

int secret_service_open(secret_service **ret, char *why, size_t size) {
        *ret = NULL;
        const char *addr = getenv("DBUS_SESSION_BUS_ADDRESS");
        if (!addr || !addr[0]) {
                (void) snprintf(why, size, "no session bus: DBUS_SESSION_BUS_ADDRESS is not set");
                return 0;
        }
        (void) pthread_once(&sd_once, sd_load);
        if (!sd.loaded) {
                (void) snprintf(why, size, "%s", sd.why);
                return -ENOSYS;
        }
        secret_service *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        int r = sd.sd_bus_open_user(&s->bus);
        if (r >= 0)
                r = sd.sd_bus_set_method_call_timeout(s->bus, SS_CALL_TIMEOUT_USEC);
        if (r >= 0)
                r = service_on_bus(s->bus);
        if (r <= 0) {
                if (r == 0)
                        (void) snprintf(why, size, "no Secret Service on the session bus");
                else
                        (void) snprintf(why, size, "cannot ask the session bus "
                                        "(DBUS_SESSION_BUS_ADDRESS) for a Secret Service: %s",
                                        strerror(-r));
                secret_service_close(s);
                return r;
        }
        (void) snprintf(why, size, "%s is on the session bus", SS_BUS_NAME);
        *ret = s;
        return 1;
}

/* ---- calls -------------------------------------------------------------------------------- */

static int locked(const char *what, cordon_error *err);

static int bus_failed(int r, const sd_bus_error *e, const char *what, cordon_error *err) {
        if (e && e->name && strcmp(e->name, "org.freedesktop.Secret.Error.IsLocked") == 0)
                return locked(what, err);
        return cordon_set_error(err, CORDON_LAUNCH_FAILED, r < 0 ? -r : EIO,
                                "secrets: the Secret Service %s: %s", what,
                                e && e->message ? e->message : strerror(r < 0 ? -r : EIO));
}

static int locked(const char *what, cordon_error *err) {
        return cordon_set_error(err, CORDON_LAUNCH_FAILED, EACCES,
                                "secrets: the Secret Service %s: its collection is locked; "
                                "unlock it (log in to the desktop, or gnome-keyring-daemon "
                                "--unlock) and try again",
                                what);
}

/* A "plain" session: the value crosses the bus as it is, on a Unix socket that only this user
 * and root can connect to (docs/design/secrets.md says why no encrypted session). */
static int open_session(secret_service *s, cordon_error *err) {
        if (s->session)
                return 0;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *path = NULL;
        int r = sd.sd_bus_call_method(s->bus, SS_BUS_NAME, SS_PATH, SS_SERVICE, "OpenSession", &e,
                                      &reply, "sv", "plain", "s", "");
        if (r >= 0 && (r = sd.sd_bus_message_skip(reply, "v")) >= 0)
                r = sd.sd_bus_message_read(reply, "o", &path);
        if (r >= 0 && !(s->session = strdup(path)))
                r = -ENOMEM;
        if (r < 0)
                (void) bus_failed(r, &e, "refused a session", err);
        (void) sd.sd_bus_message_unref(reply);
        sd.sd_bus_error_free(&e);
        return r < 0 ? r : 0;
}

/* The items with cordon's attributes (and `name`'s, unless NULL): unlocked and locked. */
static int search(secret_service *s, const char *name, char ***unlocked, char ***lockd,
                  cordon_error *err) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *m = NULL, *reply = NULL;
        int r = sd.sd_bus_message_new_method_call(s->bus, &m, SS_BUS_NAME, SS_PATH, SS_SERVICE,
                                                  "SearchItems");
        if (r >= 0)
                r = name ? sd.sd_bus_message_append(m, "a{ss}", 2, "application", "cordon",
                                                    "name", name)
                         : sd.sd_bus_message_append(m, "a{ss}", 1, "application", "cordon");
        if (r >= 0)
                r = sd.sd_bus_call(s->bus, m, 0, &e, &reply);
        if (r >= 0 && (r = sd.sd_bus_message_read_strv(reply, unlocked)) >= 0)
                r = sd.sd_bus_message_read_strv(reply, lockd);
        if (r < 0)
                (void) bus_failed(r, &e, "could not be searched", err);
        (void) sd.sd_bus_message_unref(reply);
        (void) sd.sd_bus_message_unref(m);
        sd.sd_bus_error_free(&e);
        return r < 0 ? r : 0;
}

static void strv_free_plain(char **v) {
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}

static int no_such_secret(const char *name, cordon_error *err) {
        return cordon_set_error(err, CORDON_USAGE, ENOENT,
                                "secrets: no secret '%s' is stored in the Secret Service (cordon "
                                "secret set %s)",
                                name, name);
}

/* Reads the (oayays) secret of a GetSecret reply into a fresh NUL-terminated buffer. */
static int read_secret(sd_bus_message *reply, char **value, size_t *len) {
        const void *params = NULL, *bytes = NULL;
        size_t n_params = 0, n = 0;
        const char *session = NULL;
        int r = sd.sd_bus_message_enter_container(reply, 'r', "oayays");
        if (r >= 0 && (r = sd.sd_bus_message_read(reply, "o", &session)) >= 0 &&
            (r = sd.sd_bus_message_read_array(reply, 'y', &params, &n_params)) >= 0)
                r = sd.sd_bus_message_read_array(reply, 'y', &bytes, &n);
        if (r < 0)
                return r;
        if (n == 0 || n > SECRET_VALUE_MAX || memchr(bytes, '\0', n))
                return -EINVAL;
        char *buf = malloc(n + 1);
        if (!buf)
                return -ENOMEM;
        memcpy(buf, bytes, n);
        buf[n] = '\0';
        *value = buf;
        *len = n;
        return 0;
}

int secret_service_get(secret_service *s, const char *name, char **value, size_t *len,
                       cordon_error *err) {
        char **unlocked = NULL, **lockd = NULL;
        int r = search(s, name, &unlocked, &lockd, err);
        if (r >= 0 && !(unlocked && unlocked[0]))
                r = lockd && lockd[0] ? locked("holds the secret but cannot give it", err)
                                      : no_such_secret(name, err);
        if (r >= 0)
                r = open_session(s, err);
        if (r >= 0) {
                sd_bus_error e = SD_BUS_ERROR_NULL;
                sd_bus_message *reply = NULL;
                r = sd.sd_bus_call_method(s->bus, SS_BUS_NAME, unlocked[0], SS_ITEM, "GetSecret",
                                          &e, &reply, "o", s->session);
                if (r >= 0 && (r = read_secret(reply, value, len)) == -EINVAL)
                        (void) cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                                "secrets: the value of '%s' in the Secret Service "
                                                "is empty, has a NUL byte, or is longer than %d "
                                                "bytes; set it again",
                                                name, SECRET_VALUE_MAX);
                else if (r < 0)
                        (void) bus_failed(r, &e, "did not give the secret", err);
                (void) sd.sd_bus_message_unref(reply);
                sd.sd_bus_error_free(&e);
        }
        strv_free_plain(unlocked);
        strv_free_plain(lockd);
        return r;
}

/* CreateItem's arguments: the label and attributes, the (oayays) secret, replace = true (an
 * item with the same attributes is replaced, so a name is one item). */
static int append_item(sd_bus_message *m, const char *session, const char *name,
                       const char *value, size_t len) {
        char label[SECRET_NAME_MAX + 16];
        (void) snprintf(label, sizeof(label), "cordon: %s", name);
        int r = sd.sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = sd.sd_bus_message_append(m, "{sv}", "org.freedesktop.Secret.Item.Label", "s",
                                             label);
        if (r >= 0)
                r = sd.sd_bus_message_append(m, "{sv}", "org.freedesktop.Secret.Item.Attributes",
                                             "a{ss}", 2, "application", "cordon", "name", name);
        if (r >= 0)
                r = sd.sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd.sd_bus_message_open_container(m, 'r', "oayays");
        if (r >= 0)
                r = sd.sd_bus_message_append(m, "o", session);
        if (r >= 0)
                r = sd.sd_bus_message_append_array(m, 'y', "", 0);
        if (r >= 0)
                r = sd.sd_bus_message_append_array(m, 'y', value, len);
        if (r >= 0)
                r = sd.sd_bus_message_append(m, "s", "text/plain");
        if (r >= 0)
                r = sd.sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd.sd_bus_message_append(m, "b", 1);
        return r;
}

/* A call that returns a prompt path ("/" when none is needed): a prompt means the collection is
 * locked. cordon never shows one (it may run with no desktop); the user unlocks and retries. */
static int prompt_needed(sd_bus_message *reply, bool with_item, int *r) {
        const char *item = NULL, *prompt = NULL;
        *r = with_item ? sd.sd_bus_message_read(reply, "oo", &item, &prompt)
                       : sd.sd_bus_message_read(reply, "o", &prompt);
        return *r >= 0 && strcmp(prompt, "/") != 0;
}

int secret_service_set(secret_service *s, const char *name, const char *value, size_t len,
                       cordon_error *err) {
        int r = open_session(s, err);
        if (r < 0)
                return r;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *m = NULL, *reply = NULL;
        r = sd.sd_bus_message_new_method_call(s->bus, &m, SS_BUS_NAME, SS_DEFAULT_COLLECTION,
                                              "org.freedesktop.Secret.Collection", "CreateItem");
        if (r >= 0)
                r = append_item(m, s->session, name, value, len);
        if (r >= 0)
                r = sd.sd_bus_call(s->bus, m, 0, &e, &reply);
        if (r >= 0 && prompt_needed(reply, true, &r))
                r = locked("cannot store the secret", err);
        else if (r < 0)
                (void) bus_failed(r, &e, "did not store the secret", err);
        (void) sd.sd_bus_message_unref(reply);
        (void) sd.sd_bus_message_unref(m);
        sd.sd_bus_error_free(&e);
        return r < 0 ? r : 0;
}

static int delete_item(secret_service *s, const char *path, cordon_error *err) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int r = sd.sd_bus_call_method(s->bus, SS_BUS_NAME, path, SS_ITEM, "Delete", &e, &reply, "");
        if (r >= 0 && prompt_needed(reply, false, &r))
                r = locked("cannot remove the secret", err);
        else if (r < 0)
                (void) bus_failed(r, &e, "did not remove the secret", err);
        (void) sd.sd_bus_message_unref(reply);
        sd.sd_bus_error_free(&e);
        return r < 0 ? r : 0;
}

int secret_service_remove(secret_service *s, const char *name, cordon_error *err) {
        char **unlocked = NULL, **lockd = NULL;
        int r = search(s, name, &unlocked, &lockd, err);
        if (r >= 0 && !(unlocked && unlocked[0]) && !(lockd && lockd[0]))
                r = no_such_secret(name, err);
        for (size_t i = 0; r >= 0 && unlocked && unlocked[i]; i++)
                r = delete_item(s, unlocked[i], err);
        for (size_t i = 0; r >= 0 && lockd && lockd[i]; i++)
                r = delete_item(s, lockd[i], err);
        strv_free_plain(unlocked);
        strv_free_plain(lockd);
        return r;
}

/* The "name" attribute of an item (readable while the item is locked: attributes are not
 * secret). Pushes it onto `names` when it is a valid secret name. */
static int push_item_name(secret_service *s, const char *path, strv *names) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int r = sd.sd_bus_get_property(s->bus, SS_BUS_NAME, path, SS_ITEM, "Attributes", &e,
                                       &reply, "a{ss}");
        /* sd_bus_get_property leaves the reply inside the variant. */
        if (r >= 0)
                r = sd.sd_bus_message_enter_container(reply, 'a', "{ss}");
        const char *k = NULL, *v = NULL;
        while (r >= 0 && (r = sd.sd_bus_message_read(reply, "{ss}", &k, &v)) > 0)
                if (strcmp(k, "name") == 0 && secret_name_valid(v))
                        r = strv_push_unique(names, v);
        (void) sd.sd_bus_message_unref(reply);
        sd.sd_bus_error_free(&e);
        return r;
}

int secret_service_list(secret_service *s, strv *names, cordon_error *err) {
        char **unlocked = NULL, **lockd = NULL;
        int r = search(s, NULL, &unlocked, &lockd, err);
        if (r < 0)
                return r;
        for (size_t i = 0; r >= 0 && unlocked && unlocked[i]; i++)
                r = push_item_name(s, unlocked[i], names);
        for (size_t i = 0; r >= 0 && lockd && lockd[i]; i++)
                r = push_item_name(s, lockd[i], names);
        strv_free_plain(unlocked);
        strv_free_plain(lockd);
        if (r < 0)
                return bus_failed(r, NULL, "could not list its items", err);
        return 0;
}
