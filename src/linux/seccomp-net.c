/* SPDX-License-Identifier: Apache-2.0 */
/* The landlock backend's socket allowlist, a hand-written classic BPF program (see
 * seccomp-net.h for what it allows and why it exists next to the rule table). Written out
 * instruction by instruction with named positions so every jump can be checked by eye; the
 * tests run it through the interpreter of src/plan/seccomp-plan.c. */
#include "linux/seccomp-net.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/uapi.h"
#include "util/util.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#endif

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef SOCK_DCCP
#define SOCK_DCCP 6
#endif

/* The low 32 bits of syscall argument i: socket()'s arguments are ints, and the kernel ignores
 * the upper half of the register. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#else
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i) + 4)
#endif

/* Positions of the instructions; a jump names its target, and the offset is computed. */
enum {
        I_LD_ARCH, I_ARCH, I_LD_NR, I_IS_SOCKET, I_IS_PAIR,
        L_SOCKET, I_FAM_UNIX, I_FAM_VSOCK, I_FAM_NETLINK, I_FAM_INET, I_FAM_INET6,
        L_INET, I_TYPE_MASK, I_T_STREAM, I_T_DGRAM, I_T_RAW, I_T_SEQPACKET, I_T_DCCP, I_T_PACKET,
        L_STREAM, I_P_DEFAULT, I_P_TCP, I_P_SCTP, I_P_MPTCP,
        L_NETLINK, I_NL_ROUTE,
        L_PAIR, I_PAIR_UNIX,
        L_NO_FAMILY, L_NO_TYPE, L_NO_PROTO, L_NO_PAIR, L_ALLOW,
        N_INSNS,
};

/* A conditional jump at position `at`: to `t` when A == k, else to `f`. */
#define JEQ(at, k, t, f) [at] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (t) - (at) - 1, (f) - (at) - 1)
#define LD(at, off) [at] = BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define RET(at, v) [at] = BPF_STMT(BPF_RET | BPF_K, (v))
#define DENY(at, e) RET(at, SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))

static const struct sock_filter program[N_INSNS] = {
        LD(I_LD_ARCH, offsetof(struct seccomp_data, arch)),
        JEQ(I_ARCH, NATIVE_ARCH, I_LD_NR, L_ALLOW), /* other ABIs: refused by the main filter */
        LD(I_LD_NR, offsetof(struct seccomp_data, nr)),
        JEQ(I_IS_SOCKET, __NR_socket, L_SOCKET, I_IS_PAIR),
        JEQ(I_IS_PAIR, __NR_socketpair, L_PAIR, L_ALLOW),

        /* socket(domain, type, protocol) */
        LD(L_SOCKET, ARG_LO(0)),
        JEQ(I_FAM_UNIX, AF_UNIX, L_ALLOW, I_FAM_VSOCK),      /* the table decides */
        JEQ(I_FAM_VSOCK, AF_VSOCK, L_ALLOW, I_FAM_NETLINK),  /* the table refuses, reported */
        JEQ(I_FAM_NETLINK, AF_NETLINK, L_NETLINK, I_FAM_INET),
        JEQ(I_FAM_INET, AF_INET, L_INET, I_FAM_INET6),
        JEQ(I_FAM_INET6, AF_INET6, L_INET, L_NO_FAMILY),

        /* The type without SOCK_NONBLOCK / SOCK_CLOEXEC. Every type but SOCK_STREAM listed here
         * is refused by the table (reported); the rest fails here. */
        LD(L_INET, ARG_LO(1)),
        [I_TYPE_MASK] = BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf),
        JEQ(I_T_STREAM, SOCK_STREAM, L_STREAM, I_T_DGRAM),
        JEQ(I_T_DGRAM, SOCK_DGRAM, L_ALLOW, I_T_RAW),
        JEQ(I_T_RAW, SOCK_RAW, L_ALLOW, I_T_SEQPACKET),
        JEQ(I_T_SEQPACKET, SOCK_SEQPACKET, L_ALLOW, I_T_DCCP),
        JEQ(I_T_DCCP, SOCK_DCCP, L_ALLOW, I_T_PACKET),
        JEQ(I_T_PACKET, SOCK_PACKET, L_ALLOW, L_NO_TYPE),

        /* A stream is TCP (protocol 0 or IPPROTO_TCP); SCTP and MPTCP streams are the table's. */
        LD(L_STREAM, ARG_LO(2)),
        JEQ(I_P_DEFAULT, 0, L_ALLOW, I_P_TCP),
        JEQ(I_P_TCP, IPPROTO_TCP, L_ALLOW, I_P_SCTP),
        JEQ(I_P_SCTP, IPPROTO_SCTP, L_ALLOW, I_P_MPTCP),
        JEQ(I_P_MPTCP, IPPROTO_MPTCP, L_ALLOW, L_NO_PROTO),

        /* Routing netlink only: getifaddrs() and getaddrinfo(AI_ADDRCONFIG) read it, and without
         * capabilities it changes nothing. Other netlink families reach other processes and
         * kernel subsystems (NETLINK_USERSOCK, audit, uevents). */
        LD(L_NETLINK, ARG_LO(2)),
        JEQ(I_NL_ROUTE, NETLINK_ROUTE, L_ALLOW, L_NO_PROTO),

        /* socketpair(): AF_UNIX (the table refuses its datagram pairs); AF_TIPC pairs and any
         * family added later fail here. */
        LD(L_PAIR, ARG_LO(0)),
        JEQ(I_PAIR_UNIX, AF_UNIX, L_ALLOW, L_NO_PAIR),

        DENY(L_NO_FAMILY, EAFNOSUPPORT),
        DENY(L_NO_TYPE, ESOCKTNOSUPPORT),
        DENY(L_NO_PROTO, EPROTONOSUPPORT),
        DENY(L_NO_PAIR, EOPNOTSUPP),
        RET(L_ALLOW, SECCOMP_RET_ALLOW),
};

const struct sock_filter *seccomp_net_filter(size_t *ret_n) {
        *ret_n = ELEMENTSOF(program);
        return program;
}

int seccomp_install_net_filter(void) {
        struct sock_fprog prog = { .len = (unsigned short) ELEMENTSOF(program),
                                   .filter = (struct sock_filter *) program };
        if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
                return -errno;
        return 0;
}
