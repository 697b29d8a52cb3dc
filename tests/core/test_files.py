"""The lab's file helpers: atomic writes keep permissions, run folders are held by one run."""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from uno_env.configuration import load_yaml_mapping
from uno_env.files import (
    FolderInUseError,
    FolderLock,
    UnwritableFileError,
    check_writable_target,
    read_regular_file,
    save_atomically,
    why_missing,
    write_atomically,
)
from uno_env.folders import RunFolder
from uno_env.rules import load_rules


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_a_new_file_gets_the_mode_of_a_plain_open(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        write_atomically(tmp_path / "new.json", "{}")
        (tmp_path / "plain.json").write_text("{}")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "new.json") == _mode(tmp_path / "plain.json") == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_rewritten_file_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    path.write_text("old")
    path.chmod(0o640)
    write_atomically(path, b"new")
    assert path.read_bytes() == b"new" and _mode(path) == 0o640


def _named_pipe(path: Path) -> str:
    os.mkfifo(path)
    return "a named pipe"


def _folder(path: Path) -> str:
    path.mkdir()
    (path / "inside.txt").write_text("kept")
    return "a folder"


def _symlink(path: Path) -> str:
    (path.parent / "elsewhere.txt").write_text("kept")
    path.symlink_to(path.parent / "elsewhere.txt")
    return "a symbolic link"


def _dangling_symlink(path: Path) -> str:
    path.symlink_to(path.parent / "nowhere.txt")
    return "a symbolic link"


def _socket(path: Path) -> str:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()  # the socket file stays
    return "a socket"


def _listing(folder: Path) -> dict[str, tuple[int, bytes | str | None]]:
    """Each entry's type bits and content (a link's target), not following links."""
    listing: dict[str, tuple[int, bytes | str | None]] = {}
    for entry in sorted(folder.rglob("*")):
        mode = entry.lstat().st_mode
        if stat.S_ISLNK(mode):
            content: bytes | str | None = os.readlink(entry)
        elif stat.S_ISREG(mode):
            content = entry.read_bytes()
        else:
            content = None
        listing[str(entry.relative_to(folder))] = (stat.S_IFMT(mode), content)
    return listing


@pytest.mark.parametrize(
    "make", [_named_pipe, _folder, _symlink, _dangling_symlink, _socket], ids=lambda f: f.__name__
)
def test_a_write_never_replaces_what_is_not_a_regular_file(
    tmp_path: Path, make: Callable[[Path], str]
) -> None:
    target = tmp_path / "out.json"
    kind = make(target)
    before = _listing(tmp_path)
    for write in (
        lambda: write_atomically(target, "{}"),
        lambda: save_atomically(target, lambda tmp: tmp.write_text("{}")),
    ):
        with pytest.raises(UnwritableFileError, match=kind) as caught:
            write()
        assert str(target) in str(caught.value) and "\n" not in str(caught.value)
        assert isinstance(caught.value, OSError) and isinstance(caught.value, ValueError)
        assert _listing(tmp_path) == before  # left alone, and no temporary file behind


def test_a_device_is_refused_before_anything_is_written() -> None:
    with pytest.raises(UnwritableFileError, match="a character device"):
        check_writable_target(os.devnull, "--out")
    assert stat.S_ISCHR(os.lstat(os.devnull).st_mode)


def test_a_regular_file_or_nothing_may_be_written(tmp_path: Path) -> None:
    check_writable_target(tmp_path / "new.json")
    (tmp_path / "old.json").write_text("old")
    check_writable_target(tmp_path / "old.json")
    write_atomically(tmp_path / "old.json", "new")
    assert (tmp_path / "old.json").read_text() == "new"


def test_a_run_folder_is_held_by_one_run_and_a_refused_start_leaves_nothing(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "runs" / "a"
    first = RunFolder(run_dir, "training run")
    first.hold()
    second = RunFolder(run_dir, "training run")
    with pytest.raises(FolderInUseError, match=f"pid {os.getpid()}"):
        second.hold()
    first.release(undo=True)  # nothing written: the folders it made go too
    assert not (tmp_path / "runs").exists()
    second.hold()
    (run_dir / "config.yaml").write_text("name: a\n")
    second.release(undo=True)  # something written: the folder stays
    assert (run_dir / "config.yaml").is_file()


def test_a_symlink_loop_or_a_dangling_link_is_named_for_what_it_is(tmp_path: Path) -> None:
    loop, back, dangling = tmp_path / "a.yaml", tmp_path / "b.yaml", tmp_path / "c.yaml"
    loop.symlink_to(back)
    back.symlink_to(loop)
    dangling.symlink_to(tmp_path / "gone.yaml")
    assert why_missing(loop).startswith("is a symlink loop")
    assert (
        why_missing(dangling)
        == f"is a symlink to {str(tmp_path / 'gone.yaml')!r}, which does not exist"
    )
    assert why_missing(tmp_path / "none.yaml") == "does not exist"
    for read in (
        lambda path: read_regular_file(path, 100, "record"),
        load_yaml_mapping,
        load_rules,
    ):
        with pytest.raises(ValueError, match="symlink loop") as caught:
            read(loop)
        assert str(loop) in str(caught.value)
        with pytest.raises(ValueError, match="which does not exist") as caught:
            read(dangling)
        assert str(dangling) in str(caught.value)


@pytest.mark.parametrize("dangling", [False, True], ids=["to-a-file", "to-nothing"])
def test_a_lock_is_never_taken_through_a_link(tmp_path: Path, dangling: bool) -> None:
    """The pid the lock writes would overwrite the link's target, or create it elsewhere."""
    run, elsewhere = tmp_path / "run", tmp_path / "elsewhere.txt"
    run.mkdir()
    if not dangling:
        elsewhere.write_text("precious\n")
    (run / FolderLock.LOCK_NAME).symlink_to(elsewhere)
    with pytest.raises(UnwritableFileError, match=r"lock file .* symbolic link"):
        FolderLock(run, "tournament run").acquire()
    assert elsewhere.exists() != dangling
    assert dangling or elsewhere.read_text() == "precious\n"
