"""The module cache of ral_torch.compile: compiled modules kept by what they were compiled from.

Each entry is two files named by the key, a SHA-256 of everything the module's code depends on:

    <key>.ralm   the module
    <key>.json   what it was compiled from: the exported ONNX graph's SHA-256, the device, the
                 compiler's options and version, the CPU it was compiled on and this file's
                 format version, plus the module file's size and SHA-256

A lookup reads both, checks that the metadata describes this request and that the module's bytes
hash to what the metadata says, and hands back those bytes (they are loaded from memory, so the
file changing after the check does not matter). Anything else -- no metadata, metadata that does
not parse or describes another request (a key collision, a file copied from another entry), a
truncated or altered module -- is a miss, logged with its reason: the module is compiled again and
the entry replaced. Both files are written to a temporary file in the cache directory and renamed
over the entry (os.replace), so a reader in another thread or process sees a whole file or none;
a reader that sees one writer's module and another's metadata finds a hash mismatch and compiles
again, never running a module it did not check.
"""

import errno
import hashlib
import json
import logging
import os
import stat
import tempfile
from typing import Optional, Tuple

# Bump when the entry layout or what the key covers changes: older entries are then misses.
FORMAT = 2
# A metadata file is a few hundred bytes; a larger one is not ours.
_MAX_METADATA_BYTES = 1 << 16
_log = logging.getLogger("ral_torch")


class CacheError(RuntimeError):
    """The module cache cannot be used: the message names the path and what to do."""


def default_dir() -> str:
    return os.path.join(os.path.expanduser("~"), ".cache", "ral")


def resolve_dir(path=None) -> Tuple[str, bool]:
    """The cache directory (`path`, else $RAL_CACHE_DIR, else ~/.cache/ral) and whether the user
    chose it (an argument or the environment) rather than it being the default."""
    if path is not None:
        try:
            path = os.fsdecode(os.fspath(path))
        except TypeError:
            raise TypeError(f"ral_torch.compile: cache_dir must be a path or None, not "
                            f"{type(path).__name__}") from None
        if not path or "\0" in path:
            raise ValueError(f"ral_torch.compile: cache_dir {path!r} is not a directory path")
        return path, True
    env = os.environ.get("RAL_CACHE_DIR")
    if env:
        return env, True
    return default_dir(), False


class Request:
    """What a module is compiled from: the key's inputs."""

    __slots__ = ("fields", "key")

    def __init__(self, onnx: bytes, device: str, options: str, compiler: str, cpu: str):
        self.fields = {"format": FORMAT, "onnx_sha256": hashlib.sha256(onnx).hexdigest(),
                       "device": device, "options": options, "compiler": compiler, "cpu": cpu}
        h = hashlib.sha256()
        for name in sorted(self.fields):
            part = f"{name}={self.fields[name]}".encode()
            h.update(len(part).to_bytes(8, "little"))
            h.update(part)
        self.key = h.hexdigest()


class Cache:
    def __init__(self, directory: str, chosen: bool):
        self.dir = directory
        self.chosen = chosen

    def paths(self, request: Request) -> Tuple[str, str]:
        base = os.path.join(self.dir, request.key)
        return base + ".ralm", base + ".json"

    # Reading.

    def lookup(self, request: Request) -> Optional[bytes]:
        """The cached module's bytes when the entry is there and checks out, else None (the
        reason logged)."""
        module_path, meta_path = self.paths(request)
        meta_bytes, why = _read_regular(meta_path, _MAX_METADATA_BYTES)
        if meta_bytes is None:
            if why != "is missing":
                _log.warning("ral_torch.compile: cache metadata %s %s; compiling again",
                             meta_path, why)
            elif os.path.lexists(module_path):
                _log.warning("ral_torch.compile: the cached module %s has no metadata %s; "
                             "compiling again", module_path, meta_path)
            return None
        try:
            meta = json.loads(meta_bytes.decode("utf-8"))
            if not isinstance(meta, dict):
                raise ValueError("not a JSON object")
            size = meta["module_size"]
            digest = meta["module_sha256"]
            if not isinstance(size, int) or not isinstance(digest, str):
                raise ValueError("module_size or module_sha256 has the wrong type")
        except (ValueError, KeyError, RecursionError) as e:  # UnicodeDecodeError is a ValueError
            _log.warning("ral_torch.compile: cache metadata %s is malformed (%s); compiling "
                         "again", meta_path, e)
            return None
        differing = [k for k, v in request.fields.items() if meta.get(k) != v]
        if differing:
            _log.warning("ral_torch.compile: the cache entry %s was compiled from something else "
                         "(%s differ%s); compiling again", module_path, ", ".join(differing),
                         "s" if len(differing) == 1 else "")
            return None
        data, why = _read_regular(module_path, size + 1)
        if data is None:
            _log.warning("ral_torch.compile: the cached module %s %s; compiling again",
                         module_path, why)
            return None
        if len(data) != size or hashlib.sha256(data).hexdigest() != digest:
            _log.warning("ral_torch.compile: the cached module %s does not match its metadata "
                         "(%d bytes, %d expected, or another SHA-256: truncated or altered); "
                         "compiling again", module_path, len(data), size)
            return None
        return data

    # Writing.

    def store(self, request: Request, data: bytes) -> str:
        """Writes the entry (module, then metadata) atomically; returns the module's path.
        Raises CacheError naming the path when the directory cannot hold it."""
        module_path, meta_path = self.paths(request)
        meta = dict(request.fields, module_size=len(data),
                    module_sha256=hashlib.sha256(data).hexdigest())
        self._make_dir()
        self._write(module_path, data)
        self._write(meta_path, (json.dumps(meta, sort_keys=True, indent=1) + "\n").encode())
        return module_path

    def _make_dir(self):
        try:
            os.makedirs(self.dir, exist_ok=True)
        except FileExistsError as e:
            raise self._error(self.dir, "it is not a directory", e) from None
        except OSError as e:
            raise self._error(self.dir, "cannot create the directory", e) from None
        if not os.path.isdir(self.dir):
            raise self._error(self.dir, "it is not a directory")

    def _write(self, path: str, data: bytes):
        if os.path.isdir(path) and not os.path.islink(path):
            raise self._error(path, "a directory is where the cache entry goes (remove it)")
        try:
            fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=".tmp-",
                                       suffix=os.path.splitext(path)[1])
        except OSError as e:
            raise self._error(self.dir, "cannot create a file in it", e) from None
        try:
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
            except OSError as e:
                raise self._error(self.dir, "cannot write a file in it", e) from None
            try:
                os.replace(tmp, path)
            except OSError as e:
                raise self._error(path, "cannot replace the cache entry", e) from None
            tmp = None
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

    def _error(self, path: str, what: str, e: Optional[OSError] = None) -> CacheError:
        reason = f"{what}: {e.strerror or e}" if e is not None else what
        if e is not None and e.errno in (errno.ENOSPC, errno.EDQUOT):
            advice = "free some space, or set RAL_CACHE_DIR or pass cache_dir= to another directory"
        else:
            advice = "set RAL_CACHE_DIR or pass cache_dir= to a writable directory"
        return CacheError(f"ral_torch.compile: cannot use the module cache at {path}: {reason}; "
                          f"{advice}")


def _read_regular(path: str, limit: int) -> Tuple[Optional[bytes], str]:
    """The file's bytes (at most `limit`), or None and why not. Only regular files are read: a
    FIFO or device put in the cache directory must not block or feed the reader."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        return None, "is missing"
    except OSError as e:
        return None, f"cannot be opened ({e.strerror or e})"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, "is not a regular file"
        if st.st_size > limit:
            return None, f"is too large ({st.st_size} bytes)"
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks), ""
    except OSError as e:
        return None, f"cannot be read ({e.strerror or e})"
    finally:
        os.close(fd)
