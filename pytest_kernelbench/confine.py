"""Confining candidate code with the kernel's own mechanisms, before any of it runs.

A process that runs candidate code (a sandbox worker, or a build process) enters a Policy:
- Landlock (Linux >= 5.13, through its three system calls): it may read beneath the Python,
  toolchain and system folders, its own candidate file and problem file; write only beneath its
  scratch folder and its own extension build folder (and device files, its own /proc); bind or connect no TCP
  port (Landlock ABI >= 4); and signal, or reach the abstract sockets of, no process outside its
  own domain (ABI >= 6). The rules bind the process and everything it starts, for good.
- A network namespace of its own where the kernel allows one: no network at all, UDP included.

The kernel enforces; this module only also watches (a Python audit hook) so that an attempt can
be reported: kernel refusals surface as OSError that a candidate may swallow, and a record must
still say what was tried. The watch is a reporter, not a barrier: code that goes around Python
(ctypes, its own extension) is still refused by the kernel, only perhaps not reported. The watch
also notes every process started, and follows the process's Python children: a process it forks
keeps the hook, and every Python interpreter it starts installs it at startup (child_startup/
sitecustomize.py, found through PYTHONPATH); both write what they see to a file in the scratch
folder, which the watching process reads back with its own (take_attempts, take_started).
"""

from __future__ import annotations

import ctypes
import errno
import functools
import json
import os
import shlex
import site
import socket
import sys
import sysconfig
from dataclasses import asdict, dataclass, field
from pathlib import Path

MODES = ("auto", "require", "off")
ENV_VAR = "KB_CONFINE_POLICY"  # a build process reads its policy here
# What a Python child of a confined process reads at startup to watch itself: the policy, the
# process group and the file to report to (child_startup/sitecustomize.py).
WATCH_ENV = "KB_CONFINE_WATCH"
CHILD_STARTUP = str(Path(__file__).resolve().parent / "child_startup")
CHILDREN_REPORT = ".kb-children.jsonl"  # in the scratch folder

# Landlock's system calls (one number on every architecture) and its access rights.
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
_PR_SET_NO_NEW_PRIVS = 38
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE = 1 << 13, 1 << 14  # ABI 2, ABI 3
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE  # the rights a rule on a file may carry
READ = EXECUTE | READ_FILE | READ_DIR
DEVICE = READ_FILE | WRITE_FILE | READ_DIR | TRUNCATE  # use /dev/null, /dev/nvidia*; create nothing
# Folders every process here reads: the toolchain (compilers, CUDA), its configuration, and the
# kernel's views of processes and devices.
SYSTEM_READ = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/opt", "/proc",
               "/sys", "/dev", "/run", "/var/run")
# Where libraries keep caches and temporary files: all pointed into the scratch folder. HOME
# too: CuPy, torch's extension builds and generated code write beneath "~" as a matter of course.
SCRATCH_ENV = ("TMPDIR", "XDG_CACHE_HOME", "TRITON_CACHE_DIR", "TRITON_HOME",
               "TORCHINDUCTOR_CACHE_DIR", "CUDA_CACHE_PATH", "HOME")


class ConfineError(RuntimeError):
    pass


@dataclass(frozen=True)
class Policy:
    """What a confined process may touch. Paths are absolute; `protected` are folders whose other
    files it must not read (other candidates, the build cache), named in reports of attempts."""

    read: tuple[str, ...]
    write: tuple[str, ...]
    protected: tuple[str, ...] = ()
    scratch: str = ""
    network: bool = False
    workdir: str = ""  # its current folder: its build folder, where a build into "./x" stays
    # Abstract unix sockets and signals kept within its own domain (Landlock ABI >= 6); a
    # profiled process talks to its profiler outside it (see ncu.py).
    scoped: bool = True

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Policy:
        data = json.loads(text)
        return cls(read=tuple(data["read"]), write=tuple(data["write"]),
                   protected=tuple(data.get("protected", ())), scratch=data.get("scratch", ""),
                   network=bool(data.get("network")), workdir=data.get("workdir", ""),
                   scoped=bool(data.get("scoped", True)))


@dataclass
class Applied:
    """What confinement a process actually entered."""

    landlock_abi: int = 0
    network: str = "open"  # namespace (nothing reachable), tcp (TCP refused), open
    signals: bool = False  # signals to processes outside the domain refused
    notes: list[str] = field(default_factory=list)

    @property
    def confined(self) -> bool:
        return self.landlock_abi > 0

    def describe(self) -> str:
        if not self.confined:
            return "none" + (f" ({'; '.join(self.notes)})" if self.notes else "")
        parts = [f"Landlock ABI {self.landlock_abi}", f"network: {self.network}",
                 "signals: own group only" if self.signals else "signals: not confined"]
        return ", ".join(parts)


# --- what the kernel offers --------------------------------------------------------------------

@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def landlock_abi() -> int:
    """The Landlock ABI version this kernel offers; 0 where it has none (or not on Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    version = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0),
                              ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(version), 0)


def expected(mode: str) -> Applied:
    """What a confined process will enter under this --kb-confine mode, as far as the pytest
    process can tell (the network namespace is only known once a worker tried it)."""
    abi = landlock_abi() if mode != "off" else 0
    network = "tcp refused, or none in a namespace where allowed" if abi >= 4 else "open"
    applied = Applied(landlock_abi=abi, network=network, signals=abi >= 6)
    if mode == "off":
        applied.notes.append("--kb-confine=off")
    elif not abi:
        applied.notes.append("this kernel offers no Landlock")
    return applied


# --- the policy ------------------------------------------------------------------------------

def python_read_roots() -> list[str]:
    """Where this interpreter, its libraries and the plugin itself live."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             *sysconfig.get_paths().values(), *site.getsitepackages(), site.getusersitepackages(),
             str(Path(__file__).resolve().parent)}
    roots.update(entry for entry in sys.path if entry)
    for name, module in list(sys.modules.items()):  # packages installed outside site-packages
        path = getattr(module, "__file__", None)
        # Not the problems and candidates this harness imported itself (kb_problem_..., ...).
        if path and "." not in name and not name.startswith("kb_"):
            roots.add(str(Path(path).resolve().parent))
    return sorted(roots)


def policy_for(candidate: Path | None, problem: Path | None, scratch: Path,
               build_folder: Path | None, protected: list[Path], network: bool = False,
               reads: tuple[Path, ...] = ()) -> Policy:
    """The policy of a process that runs one candidate: read the system, Python, its own two
    files and `reads`; write its scratch and build folders."""
    guarded = tuple(str(path.resolve()) for path in protected)
    own = [str(path.resolve()) for path in (candidate, problem, *reads) if path is not None]
    writes = [str(scratch.resolve())]
    if build_folder is not None:
        build_folder.mkdir(parents=True, exist_ok=True)
        writes.append(str(build_folder.resolve()))
    return Policy(read=(*read_roots(guarded), *own), write=tuple(writes), protected=guarded,
                  scratch=writes[0], network=network, workdir=writes[-1])


@functools.cache
def read_roots(guarded: tuple[str, ...]) -> tuple[str, ...]:
    """System and Python folders, less any that holds a protected folder (e.g. the current
    folder on sys.path, when candidate sets live beneath it); the toolchain's are kept."""
    essential = {str(Path(root).resolve()) for root in SYSTEM_READ[:8] if os.path.exists(root)}
    roots = {str(Path(root).resolve()) for root in (*SYSTEM_READ, *python_read_roots())
             if os.path.exists(root)}
    kept = sorted(root for root in roots
                  if root in essential or not any(beneath(g, root) for g in guarded))
    return tuple(root for root in kept  # a root beneath another adds nothing
                 if not any(other != root and beneath(root, other) for other in kept))


def scratch_env(scratch: str) -> dict[str, str]:
    """Environment that points library caches and temporary files into the scratch folder.
    The home there has the cache folder a used home has (~/.cache/torch_extensions is where
    generated code often points its builds), and XDG_CACHE_HOME is that folder, as by default."""
    env = {name: os.path.join(scratch, name.lower()) for name in SCRATCH_ENV}
    env["XDG_CACHE_HOME"] = os.path.join(env["HOME"], ".cache")
    return env


HOME_FOLDERS = (os.path.join(".cache", "torch_extensions"),)


# --- entering it -----------------------------------------------------------------------------

def enter(policy: Policy) -> Applied:
    """Confine this process (and all it starts) to the policy. Call while single-threaded (just
    after a fork, or first thing in a fresh interpreter): Landlock binds the calling thread and
    its future threads, not threads already running."""
    applied = Applied()
    for name, path in scratch_env(policy.scratch).items():
        os.makedirs(path, exist_ok=True)
        os.environ[name] = path
    for folder in HOME_FOLDERS:
        os.makedirs(os.path.join(os.environ["HOME"], folder), exist_ok=True)
    os.chdir(policy.workdir or policy.scratch)
    sys.dont_write_bytecode = True  # no __pycache__ beside the candidate's file
    if not policy.network:
        applied.network = _private_network(applied.notes)
    abi = landlock_abi()
    if abi:
        _landlock(policy, abi)
        applied.landlock_abi = abi
        applied.signals = abi >= 6 and policy.scoped
        if applied.network == "open" and abi >= 4:
            applied.network = "tcp"
    else:
        applied.notes.append("this kernel offers no Landlock")
    report = os.path.join(policy.scratch, CHILDREN_REPORT)
    watch(policy, report, owner=os.getpid())
    watch_children(policy, report)
    ENTERED.append(applied)
    return applied


def own_folder() -> Path | None:
    """The folder a confined process may write and works in (its build folder, else its
    scratch folder); None where this process entered no confinement."""
    return Path.cwd() if ENTERED else None


def _private_network(notes: list[str]) -> str:
    """A network namespace with nothing in it: directly where the process may (root), else
    inside a user namespace of its own that maps its own user ids."""
    libc = _libc()
    clone_newnet, clone_newuser = 0x40000000, 0x10000000
    if libc.unshare(clone_newnet) == 0:
        return "namespace"
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(clone_newuser | clone_newnet) != 0:
        notes.append(f"no network namespace ({os.strerror(ctypes.get_errno())})")
        return "open"
    for path, text in (("/proc/self/setgroups", "deny"), ("/proc/self/uid_map", f"{uid} {uid} 1"),
                       ("/proc/self/gid_map", f"{gid} {gid} 1")):
        try:
            with open(path, "w") as handle:
                handle.write(text)
        except OSError:
            pass
    return "namespace"


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def fs_rights(abi: int) -> int:
    """Every file-system right this ABI can refuse (device ioctls are left to file modes)."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


def _landlock(policy: Policy, abi: int) -> None:
    libc = _libc()
    handled = fs_rights(abi)
    attr = _RulesetAttr(handled_access_fs=handled,
                        handled_access_net=(NET_BIND_TCP | NET_CONNECT_TCP) if abi >= 4 else 0,
                        scoped=(SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL)
                        if abi >= 6 and policy.scoped else 0)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else (16 if abi >= 4 else 8)
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size),
                           ctypes.c_uint32(0))
    if ruleset < 0:
        raise ConfineError(f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    try:
        rules = [(path, READ) for path in policy.read]
        # The CUDA driver writes beneath /proc/self (e.g. naming its threads) and fails to
        # initialise without it; the process's own /proc folder, nobody else's.
        rules += [("/dev", DEVICE), ("/proc/self", READ | WRITE_FILE | TRUNCATE)]
        rules += [(path, handled) for path in ("/dev/shm", *policy.write)]
        for path, rights in rules:
            _allow(ruleset, path, rights & handled)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise ConfineError(f"prctl(NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}")
        if libc.syscall(_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) != 0:
            raise ConfineError(f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(ruleset)


def _allow(ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a folder this machine does not have
    try:
        if not os.path.isdir(path):
            rights &= _FILE_RIGHTS
        rule = _PathBeneathAttr(allowed_access=rights, parent_fd=fd)
        if _libc().syscall(_ADD_RULE, ruleset, ctypes.c_int(_RULE_PATH_BENEATH),
                           ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
            raise ConfineError(f"landlock_add_rule {path}: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)


# --- reporting attempts ----------------------------------------------------------------------

ATTEMPTS: list[str] = []  # what this process and its children tried and were refused
STARTED: list[str] = []  # the commands they started (allowed: a build runs ninja and compilers)
ENTERED: list[Applied] = []  # the confinement this process entered, once it has
MAX_ATTEMPTS = 10
MAX_STARTED = 20
MAX_COMMAND_CHARS = 300
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_PATH_WRITES = {"os.remove": 1, "os.rmdir": 1, "os.mkdir": 1, "os.chmod": 1, "os.chown": 1,
                "os.truncate": 1, "os.utime": 1, "shutil.rmtree": 1, "os.rename": 2,
                "os.symlink": 2, "os.link": 2}


def beneath(path: str, root: str) -> bool:
    """Whether path is root or lies below it (both absolute, as given)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def judge(policy: Policy, event: str, args: tuple, pid: int, group: int) -> str | None:
    """The refused attempt an audit event stands for, in words, or None. Pure but for path
    resolution: writes outside the write folders, reads of protected folders other than the
    process's own files, TCP/UDP traffic, and signals to processes outside its own group."""
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        path = _absolute(args[0])
        mode, flags = args[1], args[2] if len(args) > 2 else 0
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
            bool((flags or 0) & _WRITE_FLAGS)
        if writes:
            return None if _may_write(policy, path) else f"write {path}"
        guarded = any(beneath(path, root) for root in policy.protected)
        mine = path in policy.read or _may_write(policy, path)
        return f"read {path}" if guarded and not mine else None
    if event in _PATH_WRITES:
        for raw in args[:_PATH_WRITES[event]]:
            if isinstance(raw, (str, bytes, os.PathLike)):
                path = _absolute(raw)
                if not _may_write(policy, path):
                    return f"{event.split('.')[-1]} {path}"
        return None
    if event in ("socket.connect", "socket.bind", "socket.sendto") and not policy.network:
        sock, address = args[0], args[-1]
        if getattr(sock, "family", None) in (socket.AF_INET, socket.AF_INET6):
            return f"{event.split('.')[-1]} {address}"
        return None
    if event in ("os.kill", "os.killpg"):
        target, sig = args[0], args[1]
        if event == "os.killpg" or target < 0:
            outside = abs(target) not in (0, group)
        else:
            outside = target not in (0, pid) and _group_of(target) != group
        return f"signal {sig} to process {abs(target)}" if outside else None
    return None


def _absolute(raw) -> str:
    path = os.fsdecode(os.fspath(raw))
    return os.path.realpath(path)


def _may_write(policy: Policy, path: str) -> bool:
    return any(beneath(path, root) for root in (*policy.write, "/dev", f"/proc/{os.getpid()}"))


def _group_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def started_command(event: str, args: tuple) -> str | None:
    """The command an audit event starts a process with, in words (capped), or None."""
    if event in ("os.fork", "os.forkpty"):
        return "fork"
    position = {"os.system": 0, "subprocess.Popen": 1, "os.posix_spawn": 1, "os.exec": 1,
                "os.spawn": 2, "pty.spawn": 0}.get(event)
    if position is None or len(args) <= position:
        return None
    command = args[position]
    if isinstance(command, (str, bytes, os.PathLike)):
        text = os.fsdecode(os.fspath(command))
    else:
        text = shlex.join(os.fsdecode(os.fspath(part)) if isinstance(part, (str, bytes, os.PathLike))
                          else str(part) for part in command)
    return text if len(text) <= MAX_COMMAND_CHARS else text[:MAX_COMMAND_CHARS - 1] + "…"


@dataclass
class _ChildrenReport:
    """The file a watched process's children report to, and how much of it was read back."""

    path: str = ""
    read_bytes: int = 0


_CHILDREN = _ChildrenReport()
_WATCHED_EVENTS = ("os.", "socket.", "shutil.", "subprocess.", "pty.")


def watch(policy: Policy, report: str = "", owner: int | None = None,
          group: int | None = None) -> None:
    """Record each refused attempt that passes through Python, and each process started: in
    ATTEMPTS and STARTED while this is the process `owner`, else (a process it forked, or a
    Python child) as lines appended to the `report` file. `group` is the watched process
    group (this process's own by default)."""
    group = os.getpgrp() if group is None else group
    busy = [False]
    written: set[tuple[str, str]] = set()  # each line once per process, and a bounded number

    def note(kind: str, text: str) -> None:
        if os.getpid() == owner:
            kept, cap = (ATTEMPTS, MAX_ATTEMPTS) if kind == "attempt" else (STARTED, MAX_STARTED)
            if text not in kept and len(kept) < cap:
                kept.append(text)
        elif report and (kind, text) not in written and len(written) < MAX_ATTEMPTS + MAX_STARTED:
            written.add((kind, text))
            fd = os.open(report, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:  # one short write: lines from several processes never interleave
                os.write(fd, (json.dumps({kind: text}) + "\n").encode())
            finally:
                os.close(fd)

    def hook(event: str, args: tuple) -> None:
        if busy[0] or not (event == "open" or event.startswith(_WATCHED_EVENTS)):
            return
        busy[0] = True  # resolving a path, or writing the report, raises events of its own
        try:
            attempt = judge(policy, event, args, os.getpid(), group)
            command = started_command(event, args)
            if attempt:
                note("attempt", attempt)
            if command:
                note("started", command)
        except Exception:  # noqa: BLE001 - a hook must never break the code it watches
            pass
        finally:
            busy[0] = False

    sys.addaudithook(hook)


def watch_children(policy: Policy, report: str) -> None:
    """Have every Python interpreter this process starts (directly or not) watch itself as this
    one does, reporting to `report`: its environment names the policy, and PYTHONPATH leads to
    child_startup/sitecustomize.py, which reads it. An interpreter started with -I, -E or -S,
    or with an environment of its own making, skips it."""
    _CHILDREN.path, _CHILDREN.read_bytes = report, 0
    os.environ[WATCH_ENV] = json.dumps({"policy": policy.to_json(), "group": os.getpgrp(),
                                        "report": report})
    inherited = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = CHILD_STARTUP + (os.pathsep + inherited if inherited else "")


def watch_as_child() -> None:
    """In a Python interpreter a watched process started: watch this one too (see
    watch_children); nothing where none is watched."""
    text = os.environ.get(WATCH_ENV)
    if not text:
        return
    told = json.loads(text)
    watch(Policy.from_json(told["policy"]), told["report"], group=int(told["group"]))


def _read_children_report() -> None:
    """Add what this process's children reported since the last read to its own lists."""
    if not _CHILDREN.path:
        return
    try:
        with open(_CHILDREN.path, "rb") as handle:
            handle.seek(_CHILDREN.read_bytes)
            data = handle.read()
    except OSError:
        return
    complete = data[:data.rfind(b"\n") + 1]  # a line still being written waits for next time
    _CHILDREN.read_bytes += len(complete)
    for line in complete.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # the file is in the candidate's reach: read what reads as a report
        for kind, kept, cap in (("attempt", ATTEMPTS, MAX_ATTEMPTS),
                                ("started", STARTED, MAX_STARTED)):
            text = entry.get(kind) if isinstance(entry, dict) else None
            if isinstance(text, str) and text not in kept and len(kept) < cap:
                kept.append(text[:MAX_COMMAND_CHARS])


def take_attempts() -> list[str]:
    """The attempts recorded since the last call, this process's children's included."""
    _read_children_report()
    taken = list(ATTEMPTS)
    ATTEMPTS.clear()
    return taken


def take_started() -> list[str]:
    """The commands this process and its children started since the last call."""
    _read_children_report()
    taken = list(STARTED)
    STARTED.clear()
    return taken


def refused(exc: BaseException) -> bool:
    """Whether an exception is, most likely, this process's confinement refusing something:
    a permission error in a confined process (the harness gave it every right it needs)."""
    return bool(ENTERED) and ENTERED[0].confined and isinstance(exc, OSError) \
        and exc.errno in (errno.EACCES, errno.EPERM)
