#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the assembly that embeds the guest agent in libcordon (vm-host.h:
vm_guest_agent_start .. vm_guest_agent_end). Usage: guest-agent-blob.py AGENT OUTPUT.S"""
import os
import sys

agent, out = os.path.abspath(sys.argv[1]), sys.argv[2]
if '"' in agent or "\\" in agent:
    sys.exit(f"guest-agent-blob.py: unusable path {agent}")
with open(out, "w", encoding="utf-8") as f:
    f.write(f""".section .rodata
.balign 16
.globl vm_guest_agent_start
.hidden vm_guest_agent_start
vm_guest_agent_start:
.incbin "{agent}"
.globl vm_guest_agent_end
.hidden vm_guest_agent_end
vm_guest_agent_end:
.section .note.GNU-stack,"",@progbits
""")
