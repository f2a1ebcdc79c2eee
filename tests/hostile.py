"""A battery of hostile commands a model might send (shared by the sandbox tests)."""

HOSTILE_COMMANDS: dict[str, str] = {
    "endless_loop": "while true; do :; done",
    "endless_until": "until false; do echo x; done",
    "fork_bomb": ":(){ :|:& };:",
    "sleep_past_timeout": "sleep 100",
    "background_sleep": "sleep 100 & echo started",
    "nohup_background": "nohup sleep 100 &",
    "trap_and_sleep": "trap '' INT TERM; sleep 50",
    "yes_forever": "yes",
    "output_100mb": "head -c 104857600 /dev/zero | tr '\\0' a",
    "yes_100mb": "yes | head -c 104857600",
    "long_seq": "seq 1 100000000",
    "deep_recursion": "f(){ f; }; f",
    "deep_recursion_args": "f(){ f $1$1; }; f a",
    "huge_file_dd": "dd if=/dev/zero of=/big bs=1M count=200",
    "huge_file_loop": "for i in $(seq 1 100000); do echo line$i >> /big.txt; done",
    "huge_string": "x=$(printf 'a%.0s' {1..10000000}); echo ${#x}",
    "binary_output": "printf '\\xff\\xfe\\x00\\x01binary\\x80'",
    "invalid_utf8": "printf 'caf\\xe9 \\xc3\\x28 ok\\n'",
    "random_bytes": "head -c 4096 /dev/urandom",
    "etc_passwd": "cat /etc/passwd",
    "ssh_key": "cat ~/.ssh/id_rsa /root/.ssh/id_rsa",
    "proc_environ": "cat /proc/self/environ",
    "proc_cmdline": "cat /proc/1/cmdline",
    "env_dump": "env",
    "printenv_keys": "printenv | grep -i -E 'key|token|secret'",
    "echo_known_keys": 'echo "$ANTHROPIC_API_KEY $OPENAI_API_KEY $EVALNB_TEST_API_KEY"',
    "rm_root": "rm -rf /",
    "rm_root_no_preserve": "rm -rf --no-preserve-root / ; ls /",
    "write_etc": "echo pwned > /etc/hosts; echo pwned > /etc/evalnb_pwned",
    "write_outside": "echo pwned > /tmp/../../evalnb_pwned; echo pwned > ../../evalnb_pwned",
    "cd_escape": "cd ..; cd ..; cd ../../..; pwd; ls; touch escaped_here",
    "symlink_host": "ln -s /etc/shadow /tmp/s; cat /tmp/s; ln -s / /tmp/root; ls /tmp/root/root",
    "symlink_write": "ln -s /etc/passwd /tmp/p; echo pwned >> /tmp/p",
    "network_curl": "curl -s http://127.0.0.1:1/",
    "network_metadata": "wget -q -O- http://169.254.169.254/latest/meta-data/",
    "dev_tcp": "exec 3<>/dev/tcp/127.0.0.1/22",
    "kill_all": "kill -9 -1; kill -9 1",
    "read_stdin": "read line; echo got $line",
    "cat_stdin": "cat",
    "find_root": "find / -name '*.key' 2>/dev/null | head",
    "deep_dirs": "mkdir -p /a/$(printf 'b/%.0s' {1..300}) && echo made",
    "eval_bomb": "eval \"$(printf 'echo x; %.0s' {1..50000})\" | wc -l",
    "python_escape": "python3 -c 'import os; os.system(\"id\")'",
    "exec_shell": "exec /bin/sh -c 'id'",
}

OPEN_BY_HANDLE = r"""python3 - <<'PROBE'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
class Handle(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint), ("type", ctypes.c_int), ("data", ctypes.c_ubyte * 128)]
here, mount_id = Handle(128, 0), ctypes.c_int()
libc.name_to_handle_at(-100, b".", ctypes.byref(here), ctypes.byref(mount_id), 0)
fs_root = Handle(8, 1)  # ext4 FILEID_INO32_GEN: inode 2 (the filesystem root), generation 0
fs_root.data[0] = 2
mount_fd = os.open(".", os.O_RDONLY)
for name, handle in (("workspace", here), ("filesystem root", fs_root)):
    fd = libc.open_by_handle_at(mount_fd, ctypes.byref(handle), os.O_RDONLY)
    if fd >= 0:
        print("ESCAPED through", name, sorted(os.listdir(fd))[:5])
    else:
        print("denied", name, os.strerror(ctypes.get_errno()))
PROBE"""
"""Opens files by handle through the workspace mount: with CAP_DAC_READ_SEARCH this
reaches the whole host filesystem (the "shocker" escape); without it, EPERM."""

ESCAPE_PROBES: dict[str, str] = {
    "open_by_handle_at": OPEN_BY_HANDLE,
    "capabilities": "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status",
    "root_only_file": "cat /etc/shadow; cat /proc/self/root/etc/shadow",
    "dev_shm_write": "echo pwned > /dev/shm/evalnb-probe && ls -A /dev/shm",
    "tmp_listing": "ls -A /tmp",
}
"""Probes of the local sandbox's confinement (each asserted in tests/test_hostile.py)."""

HOSTILE_COMMANDS.update({f"probe_{name}": cmd for name, cmd in ESCAPE_PROBES.items()})
