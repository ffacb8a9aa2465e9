"""ral-compile in process: a ctypes binding of libral_compiler.so.

The library is the compiler's (compiler_passes/tools/compiler_c_api.h); the build puts it next to
libral_torch.so, and RAL_COMPILER_LIBRARY names another one. It is loaded on first use, so
`import ral_torch` works in builds without the compiler. This module only runs the compiler and
turns its exit codes into exceptions; exporting PyTorch modules is _export.py's part.
"""

import ctypes
import os
import re
import threading
from typing import List, Optional, Sequence, Tuple, Union

# ral-compile's exit codes (compiler_c_api.h).
OK = 0
FAILED = 1
USAGE = 2
INTERNAL = 4
UNSUPPORTED = 5

_lock = threading.Lock()
_library = None
_library_path = None

# "error: node 'Conv_3' (Conv): unsupported attribute auto_pad=SAME_UPPER": the name runs up to
# the first "' (<op type>):" (the reason may quote names and hold parentheses too).
_NODE_LINE = re.compile(r"node '(?P<name>.*?)' \((?P<op>[^()]*)\):\s*(?P<reason>.*)$")


class CompilerNotFoundError(RuntimeError):
    """libral_compiler.so is not where the package expects it (a build without the compiler)."""


class CompileError(RuntimeError):
    """The compiler refused or failed on a model. `returncode` is ral-compile's exit code and
    `diagnostics` every message it printed."""

    def __init__(self, message: str, returncode: int = FAILED, diagnostics: str = ""):
        super().__init__(message)
        self.returncode = returncode
        self.diagnostics = diagnostics


class UnsupportedOperatorError(CompileError):
    """The model uses ONNX operators, attributes or types the importer does not handle (exit code
    5). `operators` lists them as (node name, op type, reason) tuples."""

    def __init__(self, message: str, operators: Sequence[Tuple[str, str, str]] = (),
                 diagnostics: str = ""):
        super().__init__(message, UNSUPPORTED, diagnostics)
        self.operators = list(operators)

    @property
    def op_types(self) -> List[str]:
        """The distinct unsupported op types, in order of first appearance."""
        return list(dict.fromkeys(op for _, op, _ in self.operators))


def library_path() -> str:
    """Where libral_compiler.so is looked for: $RAL_COMPILER_LIBRARY, else next to this file."""
    override = os.environ.get("RAL_COMPILER_LIBRARY")
    if override:
        return override
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "libral_compiler.so")


def available() -> bool:
    """Whether the compiler library exists (it is not loaded)."""
    return os.path.isfile(library_path())


def _load():
    global _library, _library_path
    path = library_path()
    with _lock:
        if _library is not None and _library_path == path:
            return _library
        if not os.path.isfile(path):
            raise CompilerNotFoundError(
                f"ral_torch: the compiler library {path} does not exist; build RAL with MLIR "
                f"(RAL_ENABLE_MLIR) so that it lands next to libral_torch.so, or point "
                f"RAL_COMPILER_LIBRARY at a libral_compiler.so")
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise CompilerNotFoundError(
                f"ral_torch: cannot load the compiler library {path}: {e}") from e
        # char** diagnostics is taken as void** so that ctypes hands back the pointer itself,
        # which ral_compiler_free needs, rather than a copied bytes object.
        lib.ral_compiler_compile.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                             ctypes.POINTER(ctypes.c_void_p)]
        lib.ral_compiler_compile.restype = ctypes.c_int
        lib.ral_compiler_free.argtypes = [ctypes.c_void_p]
        lib.ral_compiler_free.restype = None
        if hasattr(lib, "ral_compiler_version"):
            lib.ral_compiler_version.argtypes = []
            lib.ral_compiler_version.restype = ctypes.c_char_p
        _library, _library_path = lib, path
        return lib


def version() -> str:
    """The compiler's version text plus the library file's size and modification time, so that a
    rebuilt compiler never reuses modules compiled by the previous one (module cache keys)."""
    lib = _load()
    text = lib.ral_compiler_version().decode() if hasattr(lib, "ral_compiler_version") else "?"
    st = os.stat(_library_path)
    return f"{text}; {st.st_size} bytes, mtime {st.st_mtime_ns}"


def _options_text(options: Union[None, str, Sequence[str]]) -> bytes:
    if options is None:
        return b""
    if not isinstance(options, str):
        options = " ".join(options)
    return options.encode()


def compile_file(input_path, output_path, options: Union[None, str, Sequence[str]] = None
                 ) -> Tuple[int, str]:
    """Runs `ral-compile <input_path> -o <output_path> <options>` in this process and returns
    (exit code, diagnostics text). `options` is a string of space-separated flags or a list of
    them. The GIL is released while the compiler runs (ctypes does so for every call)."""
    lib = _load()
    diagnostics = ctypes.c_void_p()
    rc = lib.ral_compiler_compile(os.fsencode(input_path), os.fsencode(output_path),
                                  _options_text(options), ctypes.byref(diagnostics))
    text = ""
    if diagnostics.value:
        try:
            text = ctypes.string_at(diagnostics.value).decode("utf-8", "replace")
        finally:
            lib.ral_compiler_free(diagnostics.value)
    return rc, text


def parse_unsupported(diagnostics: str) -> List[Tuple[str, str, str]]:
    """(node name, op type, reason) for each diagnostics line naming a node and 'unsupported'."""
    found = []
    for line in diagnostics.splitlines():
        if "unsupported" not in line:
            continue
        m = _NODE_LINE.search(line)
        if m:
            found.append((m.group("name"), m.group("op"), m.group("reason").strip()))
    return found


def error_for(rc: int, diagnostics: str, what: str) -> CompileError:
    """The exception for a failed compile of `what` (a model's description): an
    UnsupportedOperatorError for exit code 5, a CompileError otherwise."""
    text = diagnostics.strip() or "(no diagnostics)"
    if rc == UNSUPPORTED:
        operators = parse_unsupported(diagnostics)
        if operators:
            # One entry per op type and reason, naming each of its nodes.
            grouped = {}
            for name, op, reason in operators:
                grouped.setdefault((op, reason), []).append(f"'{name}'")
            listed = "; ".join(
                f"{op} (node{'s' if len(nodes) > 1 else ''} {', '.join(nodes)}: {reason})"
                for (op, reason), nodes in grouped.items())
        else:
            listed = text
        return UnsupportedOperatorError(
            f"ral_torch: {what} uses ONNX operators the compiler does not support: {listed}",
            operators, diagnostics)
    kind = {FAILED: "failed", USAGE: "refused its arguments or input",
            INTERNAL: "hit an internal error"}.get(rc, f"exited with code {rc}")
    return CompileError(f"ral_torch: compiling {what} {kind}:\n{text}", rc, diagnostics)


def compile_or_raise(input_path, output_path, options=None, what: Optional[str] = None) -> str:
    """compile_file, raising error_for()'s exception unless the compile succeeded; returns the
    diagnostics (warnings) of a successful compile."""
    rc, diagnostics = compile_file(input_path, output_path, options)
    if rc != OK:
        raise error_for(rc, diagnostics, what or os.fspath(input_path))
    return diagnostics
