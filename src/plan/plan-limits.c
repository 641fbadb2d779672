/* SPDX-License-Identifier: Apache-2.0 */
/* The inode bound of the private /tmp and /dev/shm (their sizes are the policy's defaults,
 * src/policy/policy-limits.c, or limits.tmpSize and limits.shmSize). Empty files cost kernel
 * memory that size= does not count, so a tmpfs also gets nr_inodes: one per 16 KiB of size. */
#include "plan/plan.h"

#define TMPFS_INODE_BYTES (16ULL << 10)
#define TMPFS_MIN_INODES 4096ULL

uint64_t plan_tmpfs_inodes(uint64_t bytes) {
        uint64_t n = bytes / TMPFS_INODE_BYTES;
        return n < TMPFS_MIN_INODES ? TMPFS_MIN_INODES : n;
}
