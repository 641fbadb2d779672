/* SPDX-License-Identifier: Apache-2.0 */
/* The guest's network set-up with ioctls (guest-net.h): the agent has no ip(8), and the
 * addresses are slirp's fixed ones (qemu's -netdev user defaults). */
#include "linux/guest-net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <net/route.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define GUEST_ADDR "10.0.2.15"
#define GUEST_MASK "255.255.255.0"
#define GATEWAY "10.0.2.2"
#define RESOLVER "10.0.2.3"

static void set_in(struct sockaddr *sa, const char *addr) {
        struct sockaddr_in *in = (struct sockaddr_in *) (void *) sa;
        *in = (struct sockaddr_in) { .sin_family = AF_INET };
        (void) inet_pton(AF_INET, addr, &in->sin_addr);
}

static int up(int s, const char *name, char *why, size_t size) {
        struct ifreq ifr = { 0 };
        (void) snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
        if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
                return snprintf(why, size, "%s: %s", name, strerror(errno)), -1;
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
                return snprintf(why, size, "%s up: %s", name, strerror(errno)), -1;
        return 0;
}

static int address(int s, char *why, size_t size) {
        struct ifreq ifr = { 0 };
        (void) snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "eth0");
        set_in(&ifr.ifr_addr, GUEST_ADDR);
        if (ioctl(s, SIOCSIFADDR, &ifr) < 0)
                return snprintf(why, size, "eth0 address: %s", strerror(errno)), -1;
        set_in(&ifr.ifr_netmask, GUEST_MASK);
        if (ioctl(s, SIOCSIFNETMASK, &ifr) < 0)
                return snprintf(why, size, "eth0 netmask: %s", strerror(errno)), -1;
        return 0;
}

static int default_route(int s, char *why, size_t size) {
        struct rtentry rt = { .rt_flags = RTF_UP | RTF_GATEWAY };
        set_in(&rt.rt_dst, "0.0.0.0");
        set_in(&rt.rt_genmask, "0.0.0.0");
        set_in(&rt.rt_gateway, GATEWAY);
        if (ioctl(s, SIOCADDRT, &rt) < 0)
                return snprintf(why, size, "default route: %s", strerror(errno)), -1;
        return 0;
}

/* A file naming slirp's resolver, bind-mounted over the root's /etc/resolv.conf (the read-only
 * export's own names the sandbox's resolver, which the guest cannot reach). An absolute symlink
 * there is followed inside `root`, not in the agent's own tree. */
static int resolv_conf(const char *root, char *why, size_t size) {
        static const char text[] = "nameserver " RESOLVER "\n";
        char at[PATH_MAX], link[PATH_MAX];
        int fd = open("/resolv.conf", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, text, sizeof(text) - 1) != (ssize_t) sizeof(text) - 1)
                return snprintf(why, size, "/resolv.conf: %s", strerror(errno)), -1;
        (void) close(fd);
        (void) snprintf(at, sizeof(at), "%s/etc/resolv.conf", root);
        ssize_t n = readlink(at, link, sizeof(link) - 1);
        if (n > 0 && link[0] == '/') {
                link[n] = '\0';
                (void) snprintf(at, sizeof(at), "%s%s", root, link);
        }
        /* Read-only: the file is the agent's own (the initramfs's), not the command's to edit. */
        if (mount("/resolv.conf", at, NULL, MS_BIND, NULL) < 0 ||
            mount(NULL, at, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
                return snprintf(why, size, "bind over %s: %s", at, strerror(errno)), -1;
        return 0;
}

int guest_net_up(const char *root, char *why, size_t size) {
        int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return snprintf(why, size, "socket: %s", strerror(errno)), -1;
        int r = up(s, "lo", why, size);
        if (r >= 0)
                r = address(s, why, size);
        if (r >= 0)
                r = up(s, "eth0", why, size);
        if (r >= 0)
                r = default_route(s, why, size);
        (void) close(s);
        return r < 0 ? r : resolv_conf(root, why, size);
}
