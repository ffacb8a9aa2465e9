"""ral_torch.load on paths that are not module files: a Python exception naming the file and the
cause (never a libstdc++ message, never a hang on a FIFO, never reading a device or a huge file)."""

import os

import pytest

import ral_torch


def check_message(path, cause):
    with pytest.raises(RuntimeError) as info:
        ral_torch.load(path)
    message = str(info.value)
    assert "'{}'".format(path) in message and cause in message, message
    assert "basic_filebuf" not in message and "underflow" not in message


def test_directory(tmp_path):
    check_message(str(tmp_path), "it is a directory, not a module file")
    os.symlink(str(tmp_path), str(tmp_path / "link.ralm"))
    check_message(str(tmp_path / "link.ralm"), "it is a directory")


def test_fifo_does_not_block(tmp_path):
    fifo = tmp_path / "module.ralm"
    os.mkfifo(str(fifo))  # no writer: a blocking open would wait forever
    check_message(str(fifo), "it is a FIFO")


def test_character_devices():
    check_message("/dev/zero", "it is a character device")
    check_message("/dev/null", "it is a character device")


def test_missing_file_and_missing_directory(tmp_path):
    check_message(str(tmp_path / "missing.ralm"), "No such file or directory")
    check_message(str(tmp_path / "file" / "below.ralm"), "No such file or directory")
    (tmp_path / "file").write_bytes(b"x")
    check_message(str(tmp_path / "file" / "below.ralm"), "Not a directory")


def test_unreadable_file(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    path = tmp_path / "secret.ralm"
    path.write_bytes(b"x" * 100)
    path.chmod(0)
    check_message(str(path), "Permission denied")


def test_huge_file_is_refused_before_reading(tmp_path):
    path = tmp_path / "huge.ralm"
    with open(str(path), "wb") as f:
        f.truncate(3 << 30)  # sparse: 3 GiB that take no disk
    check_message(str(path), "it has 3221225472 bytes; module files are limited to 2 GiB")


def test_empty_and_garbage_files_name_the_file(tmp_path):
    empty = tmp_path / "empty.ralm"
    empty.write_bytes(b"")
    check_message(str(empty), "module file")
    garbage = tmp_path / "garbage.ralm"
    garbage.write_bytes(os.urandom(4096))
    check_message(str(garbage), "module file")


def test_paths_with_odd_characters(tmp_path):
    check_message(str(tmp_path / "quote'\" and\nnewline.ralm"), "No such file or directory")
    with pytest.raises((RuntimeError, ValueError)):
        ral_torch.load("nul\0byte.ralm")
