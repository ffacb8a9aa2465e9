"""The module cache checks what it reuses: an entry whose module or metadata was altered, swapped,
truncated or removed is compiled again and replaced (and the result is right); a cache that
cannot be written is a RuntimeError naming the path, or, for the default directory, a warning."""

import copy
import json
import logging
import os
import shutil
import threading
import warnings

import pytest
import torch
from torch import nn

import ral_torch


class ModelA(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 3)

    def forward(self, x):
        return torch.sigmoid(self.fc(x))


class ModelB(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 3)

    def forward(self, x):
        return torch.relu(self.fc(x)) * 3


X = torch.randn(2, 5)


@pytest.fixture(scope="module")
def models():
    torch.manual_seed(7)
    return ModelA().eval(), ModelB().eval()


def entries(directory):
    """{key: (module path, metadata path)} of the cache entries in directory."""
    found = {}
    for name in os.listdir(directory):
        key, ext = os.path.splitext(name)
        if ext == ".ralm":
            found[key] = (os.path.join(directory, name), os.path.join(directory, key + ".json"))
    return found


def compile_into(directory, model, check, runs, compiled_again):
    before = len(runs)
    compiled = ral_torch.compile(model, X, cache_dir=str(directory))
    check(compiled, model, X)
    assert len(runs) - before == (1 if compiled_again else 0), compiled.report
    return compiled


@pytest.fixture
def populated(tmp_path, models, check, compiler_runs):
    """A cache holding ModelA's and ModelB's entries: (dir, A's paths, B's paths)."""
    a, b = models
    compile_into(tmp_path, a, check, compiler_runs, True)
    first = set(entries(tmp_path))
    compile_into(tmp_path, b, check, compiler_runs, True)
    (key_a,) = first
    (key_b,) = set(entries(tmp_path)) - first
    return tmp_path, entries(tmp_path)[key_a], entries(tmp_path)[key_b]


def test_entry_holds_the_module_and_what_it_was_compiled_from(populated, models, check,
                                                               compiler_runs):
    directory, (module, meta), _ = populated
    data = json.loads(open(meta).read())
    for field in ("onnx_sha256", "device", "options", "compiler", "cpu", "format",
                  "module_sha256", "module_size"):
        assert field in data, field
    assert len(data["onnx_sha256"]) == 64 and data["device"] == "cpu"
    assert data["module_size"] == os.path.getsize(module)
    compile_into(directory, models[0], check, compiler_runs, False)
    assert not [n for n in os.listdir(directory) if n.startswith(".tmp-")]


def tamper_flip_a_byte(a, b):
    with open(a[0], "r+b") as f:
        f.seek(os.path.getsize(a[0]) // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0x40]))


def tamper_truncate(a, b):
    os.truncate(a[0], os.path.getsize(a[0]) // 3)


def tamper_other_models_module(a, b):
    shutil.copyfile(b[0], a[0])  # B's module under A's key, A's metadata kept


def tamper_other_models_entry(a, b):
    shutil.copyfile(b[0], a[0])  # B's module and metadata under A's key
    shutil.copyfile(b[1], a[1])


def tamper_swap_metadata(a, b):
    shutil.copyfile(b[1], a[1])


def tamper_remove_metadata(a, b):
    os.unlink(a[1])


def tamper_remove_module(a, b):
    os.unlink(a[0])


def tamper_malformed_metadata(a, b):
    with open(a[1], "w") as f:
        f.write('{"module_size": "many"')


def tamper_deeply_nested_metadata(a, b):
    with open(a[1], "w") as f:
        f.write("[" * 30000 + "]" * 30000)


def tamper_metadata_says_other_compiler(a, b):
    data = json.loads(open(a[1]).read())
    data["compiler"] = "another compiler"
    with open(a[1], "w") as f:
        json.dump(data, f)


def tamper_fifo_in_place(a, b):
    os.unlink(a[0])
    os.mkfifo(a[0])


def tamper_symlink_elsewhere(a, b):
    os.unlink(a[0])
    os.symlink(b[0], a[0])


TAMPERINGS = [tamper_flip_a_byte, tamper_truncate, tamper_other_models_module,
              tamper_other_models_entry, tamper_swap_metadata, tamper_remove_metadata,
              tamper_remove_module, tamper_malformed_metadata, tamper_deeply_nested_metadata,
              tamper_metadata_says_other_compiler, tamper_fifo_in_place, tamper_symlink_elsewhere]


@pytest.mark.parametrize("tamper", TAMPERINGS, ids=lambda f: f.__name__[len("tamper_"):])
def test_tampered_entry_is_rebuilt(tamper, populated, models, check, compiler_runs, caplog):
    directory, a, b = populated
    b_module = open(b[0], "rb").read()
    tamper(a, b)
    with caplog.at_level(logging.WARNING, logger="ral_torch"):
        compile_into(directory, models[0], check, compiler_runs, True)
    assert "compiling again" in caplog.text
    # Replaced: the next compile is a hit, and B's entry is intact.
    assert os.path.isfile(a[0]) and not os.path.islink(a[0])
    compile_into(directory, models[0], check, compiler_runs, False)
    assert open(b[0], "rb").read() == b_module
    compile_into(directory, models[1], check, compiler_runs, False)


def test_concurrent_compiles_share_one_entry(tmp_path, models, check):
    # Copies: compiles of one module object take turns; of equal copies, they run at once and
    # write the same entry.
    model = models[1]
    errors, results = [], []

    def work(copy):
        try:
            results.append(ral_torch.compile(copy, X, cache_dir=str(tmp_path)))
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(copy.deepcopy(model),)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for compiled in results:
        check(compiled, model, X)
    names = sorted(os.listdir(tmp_path))
    assert len(names) == 2 and names[0].endswith(".json") and names[1].endswith(".ralm"), names


def test_entry_swapped_while_compiling_never_gives_a_wrong_module(populated, models, check):
    # Another writer keeps putting ModelB's module (and now and then its metadata) under
    # ModelA's key while ModelA is compiled again and again: each compile uses a module it
    # checked, so every result is ModelA's.
    directory, a, b = populated
    b_module, b_meta = open(b[0], "rb").read(), open(b[1], "rb").read()
    stop = threading.Event()

    def writer():
        i = 0
        while not stop.is_set():
            for data, path in ((b_module, a[0]),) + (((b_meta, a[1]),) if i % 3 == 0 else ()):
                tmp = f"{path}.writer"
                with open(tmp, "wb") as f:
                    f.write(data)
                os.replace(tmp, path)
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        for _ in range(6):
            x = torch.randn(2, 5)
            check(ral_torch.compile(models[0], x, cache_dir=str(directory)), models[0], x)
    finally:
        stop.set()
        thread.join()


# Caches that cannot be used.


def test_cache_dir_that_is_a_file(tmp_path, models, still_works):
    path = tmp_path / "not-a-dir"
    path.write_text("x")
    with pytest.raises(ral_torch.CacheError) as info:
        ral_torch.compile(models[0], X, cache_dir=str(path))
    assert isinstance(info.value, RuntimeError) and not isinstance(info.value, OSError)
    assert str(path) in str(info.value) and "not a directory" in str(info.value)
    assert "cache_dir=" in str(info.value) and "RAL_CACHE_DIR" in str(info.value)
    still_works()


def test_cache_dir_under_a_file_cannot_be_created(tmp_path, models, still_works):
    path = tmp_path / "file" / "cache"
    (tmp_path / "file").write_text("x")
    with pytest.raises(ral_torch.CacheError, match="cannot create the directory") as info:
        ral_torch.compile(models[0], X, cache_dir=str(path))
    assert str(path) in str(info.value)
    still_works()


@pytest.mark.parametrize("bad, kind", [("", ValueError), ("a\0b", ValueError), (3, TypeError)])
def test_cache_dir_that_is_not_a_path(bad, kind, models, still_works):
    with pytest.raises(kind, match="cache_dir"):
        ral_torch.compile(models[0], X, cache_dir=bad)
    still_works()


def test_read_only_cache_dir(models, still_works):
    # /proc takes no new files, for root too (chmod does not stop root).
    with pytest.raises(ral_torch.CacheError) as info:
        ral_torch.compile(models[0], X, cache_dir="/proc")
    assert "/proc" in str(info.value) and "writable directory" in str(info.value)
    still_works()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through chmod 0500")
def test_unwritable_cache_dir_as_a_user(tmp_path, models, still_works):
    directory = tmp_path / "ro"
    directory.mkdir()
    directory.chmod(0o500)
    try:
        with pytest.raises(ral_torch.CacheError, match="Permission denied"):
            ral_torch.compile(models[0], X, cache_dir=str(directory))
    finally:
        directory.chmod(0o700)
    still_works()


@pytest.mark.parametrize("which", [0, 1], ids=["module", "metadata"])
def test_entry_path_that_is_a_directory(which, populated, models, still_works):
    directory, a, _ = populated
    os.unlink(a[which])
    os.mkdir(a[which])
    with open(os.path.join(a[which], "keep"), "w") as f:
        f.write("not ours")
    with pytest.raises(ral_torch.CacheError) as info:
        ral_torch.compile(models[0], X, cache_dir=str(directory))
    assert a[which] in str(info.value) and "directory" in str(info.value)
    assert os.path.isfile(os.path.join(a[which], "keep")), "a directory was removed"
    still_works()


def test_default_cache_that_cannot_be_used_only_warns(tmp_path, models, check, monkeypatch):
    home = tmp_path / "home-is-a-file"
    home.write_text("x")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("RAL_CACHE_DIR", raising=False)
    with pytest.warns(RuntimeWarning, match="without being cached") as record:
        compiled = ral_torch.compile(models[0], X)
    assert str(home) in str(record[0].message)
    check(compiled, models[0], X)


def test_chosen_cache_from_the_environment_is_an_error(tmp_path, models, monkeypatch):
    path = tmp_path / "file"
    path.write_text("x")
    monkeypatch.setenv("RAL_CACHE_DIR", str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ral_torch.CacheError, match="RAL_CACHE_DIR"):
            ral_torch.compile(models[0], X)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_disk_full_is_a_cache_error(tmp_path, models, monkeypatch, still_works):
    # A write that fails with ENOSPC: the cache file opened is /dev/full.
    import tempfile as tempfile_module

    from ral_torch import _cache

    def full_mkstemp(dir=None, prefix=None, suffix=None):
        return os.open("/dev/full", os.O_WRONLY), os.path.join(dir, prefix + "full" + suffix)

    monkeypatch.setattr(_cache.tempfile, "mkstemp", full_mkstemp)
    assert _cache.tempfile is tempfile_module
    with pytest.raises(ral_torch.CacheError, match="No space left on device") as info:
        ral_torch.compile(models[0], X, cache_dir=str(tmp_path))
    assert str(tmp_path) in str(info.value) and "free some space" in str(info.value)
    monkeypatch.undo()
    still_works()
