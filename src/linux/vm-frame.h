/* SPDX-License-Identifier: Apache-2.0 */
/* The microvm backend's channel framing (docs/design/microvm.md "Channels"), pure: one
 * virtio-serial port carries frames `u32 length (little-endian, of type + exec id + payload) |
 * u8 type | u32 exec id | payload` both ways. The exec id names the exec a frame belongs to
 * (1 and up, chosen by the host in its EXEC frame, never reused in one VM); 0 is the agent
 * itself (READY, an agent's ERROR). The host side reads what the guest sends as untrusted input
 * — a compromised guest kernel writes whatever it likes there — so the reader bounds every
 * length, accepts only the guest's frame types, checks each payload's shape, accepts a frame
 * only for an exec the host opened (vm_frame_reader_open) and has not closed, takes one exit
 * per exec and nothing of that exec after it, and fails for good on the first violation
 * (fuzz/fuzz-vm-frame.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VM_FRAME_HEADER 9u /* length, type, exec id */
#define VM_FRAME_MAX_PAYLOAD 65536u
#define VM_FRAME_MAX_ERROR 512u /* an ERROR frame's text */
#define VM_FRAME_AGENT 0u       /* the exec id of the agent's own frames: READY, ERROR */
#define VM_FRAME_EXECS_MAX 16u  /* execs a reader tracks at once (opened, not yet closed) */

typedef enum vm_frame_type {
        /* host → guest */
        VM_FRAME_EXEC = 1,      /* vm_exec_encode() */
        VM_FRAME_STDIN = 2,     /* bytes */
        VM_FRAME_STDIN_EOF = 3, /* empty */
        VM_FRAME_SIGNAL = 4,    /* u32 signal number, 1..64 */
        VM_FRAME_RESIZE = 5,    /* u16 rows | u16 columns: the terminal's new size (vm-pty.h) */
        VM_FRAME_END = 6,       /* empty: the host read the exit frame; the guest may take the
                                 * next EXEC (nothing of this exec follows on the channel) */
        /* guest → host */
        VM_FRAME_STDOUT = 16,   /* bytes, at least one */
        VM_FRAME_STDERR = 17,   /* bytes, at least one */
        VM_FRAME_EXIT = 18,     /* u32 kind (0 exit code 0..255, 1 signal 1..64) | u32 value */
        VM_FRAME_ERROR = 19,    /* printable ASCII, 1..VM_FRAME_MAX_ERROR bytes: the agent failed */
        VM_FRAME_READY = 20,    /* empty, only as a reader's first frame: the guest booted */
} vm_frame_type;

/* One exec the host opened on a reader. */
typedef struct vm_frame_exec {
        uint32_t id;
        bool exited;      /* its EXIT frame was taken: nothing of it may follow */
} vm_frame_exec;

/* The reader of the guest's frames. */
typedef struct vm_frame_reader {
        uint8_t buf[VM_FRAME_HEADER + VM_FRAME_MAX_PAYLOAD];
        size_t len;       /* bytes held in buf */
        size_t handed;    /* the frame handed out last, dropped on the next call */
        vm_frame_exec execs[VM_FRAME_EXECS_MAX];
        size_t n_execs;   /* open execs, in execs[] */
        uint32_t last_id; /* the highest exec id opened: ids at or below it not open are closed */
        bool any;         /* a frame was taken (READY only before this) */
        bool failed;      /* a violation: every later call fails */
        char why[128];    /* the violation, for SANDBOX_UNAVAILABLE's message */
} vm_frame_reader;

typedef struct vm_frame {
        vm_frame_type type;
        uint32_t exec;       /* the exec id: an open exec's, or VM_FRAME_AGENT */
        const uint8_t *data; /* the payload, valid until the next vm_frame_feed/next call */
        size_t size;
        /* VM_FRAME_EXIT: */
        bool signaled;
        unsigned value;
} vm_frame;

void vm_frame_reader_init(vm_frame_reader *r);
/* The host sent the EXEC frame of exec `id`: the guest may now send its frames. -EINVAL for id
 * 0 or an id not above every id opened before (ids are never reused: a late frame of a closed
 * exec cannot pass for a new one's), -EMFILE with VM_FRAME_EXECS_MAX open. */
int vm_frame_reader_open(vm_frame_reader *r, uint32_t id);
/* The host sent exec `id`'s END frame: any later frame naming it is a violation. */
void vm_frame_reader_close(vm_frame_reader *r, uint32_t id);
/* Appends up to `size` bytes from the channel; returns how many were taken (fewer when the buffer
 * is full: take the frames out with vm_frame_next first), or -EPROTO once the reader failed. */
long vm_frame_feed(vm_frame_reader *r, const uint8_t *data, size_t size);
/* The next complete frame: 1 with *ret filled, 0 when more bytes are needed, -EPROTO on a
 * violation (r->why says which; the reader stays failed). */
int vm_frame_next(vm_frame_reader *r, vm_frame *ret);
/* Bytes held beyond the frame handed out last. */
size_t vm_frame_pending(const vm_frame_reader *r);

/* Writes the frame header for `type`, exec `id` and `payload` bytes into out[VM_FRAME_HEADER]. */
void vm_frame_header(uint8_t out[VM_FRAME_HEADER], vm_frame_type type, uint32_t id,
                     size_t payload);
/* A header's fields (the guest agent's reading of the host's frames): the payload's size, or
 * -1 for a length out of bounds. */
long vm_frame_parse_header(const uint8_t h[VM_FRAME_HEADER], uint8_t *type, uint32_t *id);

/* A terminal for the command (docs/design/microvm.md "Terminals"): the guest opens a PTY of
 * this size and makes it the command's stdin, stdout, stderr and controlling terminal. */
typedef struct vm_exec_tty {
        uint16_t rows, cols;
} vm_exec_tty;

#define VM_EXEC_FIXED 16u /* the EXEC payload's fixed part, before the strings */
#define VM_EXEC_TTY 1u    /* its flags bit: a PTY */

/* The EXEC payload: u32 argc | u32 envc | u32 flags (VM_EXEC_TTY) | u16 rows | u16 columns |
 * cwd NUL | argv[i] NUL ... | envp[i] NUL ...; `tty` NULL: pipes, flags and size 0. *ret is
 * malloc'ed. -E2BIG when it would exceed VM_FRAME_MAX_PAYLOAD, -EINVAL for argc 0. */
int vm_exec_encode(const char *cwd, char *const argv[], char *const envp[],
                   const vm_exec_tty *tty, uint8_t **ret, size_t *ret_size);

/* The RESIZE payload. */
void vm_resize_encode(uint8_t out[4], uint16_t rows, uint16_t cols);
