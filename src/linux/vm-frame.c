/* SPDX-License-Identifier: Apache-2.0 */
/* The microvm channel's frames (vm-frame.h): the host's reader of untrusted guest output. */
#include "linux/vm-frame.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t get_u32(const uint8_t *p) {
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
               (uint32_t) p[3] << 24;
}

static void put_u32(uint8_t *p, uint32_t v) {
        p[0] = (uint8_t) v;
        p[1] = (uint8_t) (v >> 8);
        p[2] = (uint8_t) (v >> 16);
        p[3] = (uint8_t) (v >> 24);
}

void vm_frame_reader_init(vm_frame_reader *r) {
        r->len = 0;
        r->handed = 0;
        r->n_execs = 0;
        r->last_id = 0;
        r->any = false;
        r->failed = false;
        r->why[0] = '\0';
}

int vm_frame_reader_open(vm_frame_reader *r, uint32_t id) {
        if (id == VM_FRAME_AGENT || id <= r->last_id)
                return -EINVAL;
        if (r->n_execs == VM_FRAME_EXECS_MAX)
                return -EMFILE;
        r->execs[r->n_execs++] = (vm_frame_exec) { .id = id };
        r->last_id = id;
        return 0;
}

void vm_frame_reader_close(vm_frame_reader *r, uint32_t id) {
        for (size_t i = 0; i < r->n_execs; i++)
                if (r->execs[i].id == id) {
                        r->execs[i] = r->execs[--r->n_execs];
                        return;
                }
}

static vm_frame_exec *find_exec(vm_frame_reader *r, uint32_t id) {
        for (size_t i = 0; i < r->n_execs; i++)
                if (r->execs[i].id == id)
                        return &r->execs[i];
        return NULL;
}

__attribute__((format(printf, 2, 3))) static int fail(vm_frame_reader *r, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        (void) vsnprintf(r->why, sizeof(r->why), fmt, ap);
        va_end(ap);
        r->failed = true;
        return -EPROTO;
}

/* The frame handed out last leaves the buffer only now: its payload stayed valid until here. */
static void drop_handed(vm_frame_reader *r) {
        r->len -= r->handed;
        memmove(r->buf, r->buf + r->handed, r->len);
        r->handed = 0;
}

long vm_frame_feed(vm_frame_reader *r, const uint8_t *data, size_t size) {
        if (r->failed)
                return -EPROTO;
        drop_handed(r);
        size_t room = sizeof(r->buf) - r->len;
        size_t n = size < room ? size : room;
        memcpy(r->buf + r->len, data, n);
        r->len += n;
        return (long) n;
}

/* An EXIT payload: the kind and a value in its range (a wait status the launcher can report). */
static int check_exit(vm_frame_reader *r, vm_frame_exec *e, vm_frame *f) {
        if (f->size != 8)
                return fail(r, "an exit frame of %zu bytes (8 expected)", f->size);
        uint32_t kind = get_u32(f->data), value = get_u32(f->data + 4);
        if (kind > 1)
                return fail(r, "an exit frame of unknown kind %u", kind);
        if ((kind == 0 && value > 255) || (kind == 1 && (value < 1 || value > 64)))
                return fail(r, "an exit frame with %s %u out of range",
                            kind ? "signal" : "code", value);
        f->signaled = kind == 1;
        f->value = value;
        e->exited = true;
        return 0;
}

/* Whose frame it is: the agent's own types carry VM_FRAME_AGENT, an exec's frames the id of an
 * exec the host opened and has not closed, before that exec's exit. A frame for an exec the host
 * never opened or already closed is refused: the guest cannot inject output into an exec it was
 * not asked for, nor outlive an exec's END with output the host would hand to no one (or, were
 * ids reused, to the wrong exec). */
static int check_owner(vm_frame_reader *r, vm_frame *f, vm_frame_exec **ret) {
        bool agent_type = f->type == VM_FRAME_READY || f->type == VM_FRAME_ERROR;
        *ret = NULL;
        if (f->exec == VM_FRAME_AGENT)
                return agent_type ? 0 : fail(r, "a frame of type %u for exec 0 (the agent's)",
                                             (unsigned) f->type);
        if (agent_type)
                return fail(r, "an agent's frame of type %u naming exec %u", (unsigned) f->type,
                            f->exec);
        vm_frame_exec *e = find_exec(r, f->exec);
        if (!e)
                return fail(r, "a frame for exec %u, which is %s", f->exec,
                            f->exec > r->last_id ? "unknown" : "finished");
        if (e->exited)
                return fail(r, "a frame for exec %u after its exit frame", f->exec);
        *ret = e;
        return 0;
}

/* What a guest may send, and each payload's shape. */
static int check_frame(vm_frame_reader *r, vm_frame *f, vm_frame_exec *owner) {
        bool first = !r->any;
        r->any = true;
        switch (f->type) {
        case VM_FRAME_READY:
                /* Once, first: a READY later could pass for a boot the host already saw. */
                if (!first || f->size != 0)
                        return fail(r, "a ready frame that is not the first or not empty");
                return 0;
        case VM_FRAME_STDOUT:
        case VM_FRAME_STDERR:
                return f->size > 0 ? 0 : fail(r, "an empty output frame");
        case VM_FRAME_EXIT:
                return check_exit(r, owner, f);
        case VM_FRAME_ERROR:
                if (f->size == 0 || f->size > VM_FRAME_MAX_ERROR)
                        return fail(r, "an error frame of %zu bytes", f->size);
                for (size_t i = 0; i < f->size; i++)
                        if (f->data[i] < 0x20 || f->data[i] > 0x7e)
                                return fail(r, "an error frame with a non-printable byte");
                return 0;
        case VM_FRAME_EXEC:
        case VM_FRAME_STDIN:
        case VM_FRAME_STDIN_EOF:
        case VM_FRAME_SIGNAL:
        case VM_FRAME_RESIZE:
        case VM_FRAME_END:
        default: /* the host's own types, and any other byte */
                return fail(r, "a frame of type %u, which a guest does not send",
                            (unsigned) f->type);
        }
}

int vm_frame_next(vm_frame_reader *r, vm_frame *ret) {
        if (r->failed)
                return -EPROTO;
        drop_handed(r);
        if (r->len < VM_FRAME_HEADER)
                return 0;
        uint32_t length = get_u32(r->buf);
        if (length < VM_FRAME_HEADER - 4 || length - (VM_FRAME_HEADER - 4) > VM_FRAME_MAX_PAYLOAD)
                return fail(r, "a frame length of %u", length);
        if (r->len < 4 + (size_t) length)
                return 0;
        *ret = (vm_frame) { .type = (vm_frame_type) r->buf[4], .exec = get_u32(r->buf + 5),
                            .size = length - (VM_FRAME_HEADER - 4),
                            .data = r->buf + VM_FRAME_HEADER };
        r->handed = 4 + (size_t) length;
        vm_frame_exec *owner = NULL;
        int e = check_owner(r, ret, &owner);
        if (e >= 0)
                e = check_frame(r, ret, owner);
        return e < 0 ? e : 1;
}

size_t vm_frame_pending(const vm_frame_reader *r) {
        return r->len - r->handed;
}

void vm_frame_header(uint8_t out[VM_FRAME_HEADER], vm_frame_type type, uint32_t id,
                     size_t payload) {
        put_u32(out, (uint32_t) payload + (VM_FRAME_HEADER - 4));
        out[4] = (uint8_t) type;
        put_u32(out + 5, id);
}

long vm_frame_parse_header(const uint8_t h[VM_FRAME_HEADER], uint8_t *type, uint32_t *id) {
        uint32_t length = get_u32(h);
        if (length < VM_FRAME_HEADER - 4 || length - (VM_FRAME_HEADER - 4) > VM_FRAME_MAX_PAYLOAD)
                return -1;
        *type = h[4];
        *id = get_u32(h + 5);
        return (long) (length - (VM_FRAME_HEADER - 4));
}

static size_t strv_size(char *const v[], uint32_t *count) {
        size_t n = 0;
        *count = 0;
        for (; v && v[*count]; (*count)++)
                n += strlen(v[*count]) + 1;
        return n;
}

static uint8_t *put_strv(uint8_t *p, char *const v[], uint32_t count) {
        for (uint32_t i = 0; i < count; i++) {
                size_t l = strlen(v[i]) + 1;
                memcpy(p, v[i], l);
                p += l;
        }
        return p;
}

static void put_u16(uint8_t *p, uint16_t v) {
        p[0] = (uint8_t) v;
        p[1] = (uint8_t) (v >> 8);
}

void vm_resize_encode(uint8_t out[4], uint16_t rows, uint16_t cols) {
        put_u16(out, rows);
        put_u16(out + 2, cols);
}

int vm_exec_encode(const char *cwd, char *const argv[], char *const envp[],
                   const vm_exec_tty *tty, uint8_t **ret, size_t *ret_size) {
        uint32_t argc, envc;
        size_t size = VM_EXEC_FIXED + strlen(cwd) + 1 + strv_size(argv, &argc) +
                      strv_size(envp, &envc);
        if (argc == 0)
                return -EINVAL;
        if (size > VM_FRAME_MAX_PAYLOAD)
                return -E2BIG;
        uint8_t *buf = malloc(size);
        if (!buf)
                return -ENOMEM;
        put_u32(buf, argc);
        put_u32(buf + 4, envc);
        put_u32(buf + 8, tty ? VM_EXEC_TTY : 0);
        vm_resize_encode(buf + 12, tty ? tty->rows : 0, tty ? tty->cols : 0);
        memcpy(buf + VM_EXEC_FIXED, cwd, strlen(cwd) + 1);
        uint8_t *p = put_strv(buf + VM_EXEC_FIXED + strlen(cwd) + 1, argv, argc);
        (void) put_strv(p, envp, envc);
        *ret = buf;
        *ret_size = size;
        return 0;
}
