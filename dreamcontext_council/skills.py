"""Skill packs for coding agents: install them into a project's `.claude/` and take them out again.

A pack is a folder `skill-packs/<pack>/` holding `SKILL.md` and its companion files;
its sub-agent definitions are `skill-packs/agents/<pack>-*.md`. Installing copies the
pack to `.claude/skills/<pack>/` and the agents to `.claude/agents/`, and records every
file with its sha256 in `.claude/.dreamcontext-skills.json`, so that uninstalling
removes exactly what was installed: files the user changed since are left in place.
The manifest names files relative to `.claude/` and the folders the installs created
(`created_dirs`) relative to the target, so those folders go when they are empty again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dreamcontext_council.errors import FormatError, NotFoundError, UsageError
from dreamcontext_council.folder.storage import atomic_write_json, atomic_write_text, read_text
from dreamcontext_council.resources import skill_packs_dir

CLAUDE_DIR = ".claude"
MANIFEST_NAME = ".dreamcontext-skills.json"
MANIFEST_VERSION = 1
AGENTS_FOLDER = "agents"


@dataclass(frozen=True)
class PackFile:
    """One file of a pack: where it comes from and where it goes, relative to `.claude/`."""

    source: Path
    target: str


@dataclass
class InstallResult:
    """What `install_packs` did, with paths relative to the target's `.claude/`."""

    claude_dir: Path
    packs: list[str]
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


@dataclass
class UninstallResult:
    """What `uninstall_packs` did, with paths relative to the target's `.claude/`."""

    claude_dir: Path
    packs: list[str]
    removed: list[str] = field(default_factory=list)
    kept_modified: list[str] = field(default_factory=list)
    not_installed: list[str] = field(default_factory=list)


def available_packs(packs_dir: Path | None = None) -> list[str]:
    """The names of the packs shipped with this package, sorted."""
    base = packs_dir or skill_packs_dir()
    if not base.is_dir():
        return []
    return sorted(
        p.name
        for p in base.iterdir()
        if p.is_dir() and p.name != AGENTS_FOLDER and (p / "SKILL.md").is_file()
    )


def pack_files(pack: str, packs_dir: Path | None = None) -> list[PackFile]:
    """Every file of one pack with its place under `.claude/`, in a stable order."""
    base = packs_dir or skill_packs_dir()
    check_pack_names([pack], base)
    skill_dir = base / pack
    files = [
        PackFile(path, f"skills/{pack}/{path.relative_to(skill_dir).as_posix()}")
        for path in sorted(skill_dir.rglob("*"))
        if path.is_file() and not path.name.startswith(".")
    ]
    agents_dir = base / AGENTS_FOLDER
    if agents_dir.is_dir():
        files += [
            PackFile(path, f"agents/{path.name}")
            for path in sorted(agents_dir.glob(f"{pack}-*.md"))
            if path.is_file()
        ]
    return files


def check_pack_names(packs: Iterable[str], packs_dir: Path | None = None) -> list[str]:
    """The names, deduplicated in order; UsageError naming the available packs otherwise."""
    known = available_packs(packs_dir)
    names = list(dict.fromkeys(p.strip() for p in packs if p.strip()))
    if not names:
        raise UsageError(f"Name at least one pack with --packs; available: {', '.join(known)}.")
    unknown = [p for p in names if p not in known]
    if unknown:
        listed = ", ".join(known) or "none (the package was installed without its skill packs)"
        raise UsageError(
            f"Unknown skill pack{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(u) for u in unknown)}; "
            f"available: {listed}."
        )
    return names


def install_packs(
    target: Path, packs: Iterable[str], *, force: bool = False, packs_dir: Path | None = None
) -> InstallResult:
    """Copy the packs into `<target>/.claude/` and record them in the manifest.

    Installing again is idempotent and upgrades files the user has not changed. A
    file in the way that this tool did not install, or that the user changed since,
    stops the install before anything is written, unless `force` is set.
    """
    names = check_pack_names(packs, packs_dir)
    claude = _claude_dir(target)
    manifest = _load_manifest(claude)
    plan: list[tuple[str, PackFile, str]] = []
    conflicts: list[str] = []
    for pack in names:
        for item in pack_files(pack, packs_dir):
            text = read_text(item.source, within=item.source.parent)
            plan.append((pack, item, text))
            dest = claude / item.target
            if dest.exists() and not force:
                current = _sha256_file(dest)
                recorded = _recorded_hash(manifest, item.target)
                if current != _sha256(text) and current != recorded:
                    conflicts.append(item.target)
    if conflicts:
        raise UsageError(
            f"These files in {claude} were not installed by dreamcontext or were changed since: "
            f"{', '.join(conflicts)}. Move them aside, or pass --force to overwrite them."
        )
    result = InstallResult(claude, names)
    created_dirs = set(manifest["created_dirs"])
    for pack, item, text in plan:
        dest = claude / item.target
        created_dirs.update(_missing_dirs(claude, dest.parent))
        if dest.is_file() and _sha256_file(dest) == _sha256(text):
            result.unchanged.append(item.target)
        else:
            atomic_write_text(dest, text, within=claude)
            result.written.append(item.target)
        manifest["packs"].setdefault(pack, {"files": {}})["files"][item.target] = _sha256(text)
    for pack in names:
        # A file dropped from a newer version of the pack is no longer ours to track.
        shipped = {item.target for p, item, _ in plan if p == pack}
        files = manifest["packs"][pack]["files"]
        manifest["packs"][pack]["files"] = {k: files[k] for k in sorted(files) if k in shipped}
    manifest["created_dirs"] = sorted(created_dirs)
    _save_manifest(claude, manifest)
    return result


def uninstall_packs(target: Path, packs: Iterable[str]) -> UninstallResult:
    """Remove exactly the files the packs installed; keep files the user changed since.

    Folders that the installs created are removed once they are empty; everything
    else under `.claude/` stays.
    """
    claude = _claude_dir(target)
    manifest = _load_manifest(claude)
    installed = manifest["packs"]
    names = list(dict.fromkeys(p.strip() for p in packs if p.strip()))
    if not names:
        raise UsageError(
            f"Name the packs to remove with --packs; installed: {', '.join(sorted(installed)) or 'none'}."
        )
    result = UninstallResult(claude, names)
    for pack in names:
        entry = installed.pop(pack, None)
        if entry is None:
            result.not_installed.append(pack)
            continue
        for relative, digest in sorted(entry["files"].items()):
            if _shared_with_other_pack(installed, relative):
                continue
            path = claude / relative
            if not path.is_file():
                continue
            if _sha256_file(path) != digest:
                result.kept_modified.append(relative)
                continue
            path.unlink()
            result.removed.append(relative)
    if installed:
        _prune_dirs(claude, manifest)
        _save_manifest(claude, manifest)
    else:
        manifest_path = claude / MANIFEST_NAME
        if manifest_path.exists():
            manifest_path.unlink()
        _prune_dirs(claude, manifest)
    return result


def installed_packs(target: Path) -> dict[str, list[str]]:
    """The packs recorded in `<target>/.claude/`'s manifest, each with its files."""
    manifest = _load_manifest(_claude_dir(target))
    return {pack: sorted(entry["files"]) for pack, entry in sorted(manifest["packs"].items())}


def _claude_dir(target: Path) -> Path:
    if not target.is_dir():
        raise NotFoundError(
            f"The target folder {target} does not exist; pass an existing --target."
        )
    return target / CLAUDE_DIR


def _empty_manifest() -> dict[str, Any]:
    return {"version": MANIFEST_VERSION, "packs": {}, "created_dirs": []}


def _load_manifest(claude: Path) -> dict[str, Any]:
    path = claude / MANIFEST_NAME
    if not path.is_file():
        return _empty_manifest()
    try:
        data = json.loads(read_text(path, within=claude))
    except json.JSONDecodeError as exc:
        raise FormatError(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}); fix it or delete it "
            "(then dreamcontext no longer knows which files it installed)."
        ) from exc
    packs = data.get("packs") if isinstance(data, dict) else None
    if not isinstance(packs, dict) or not all(
        isinstance(e, dict) and isinstance(e.get("files"), dict) for e in packs.values()
    ):
        raise FormatError(
            f"{path} does not look like a dreamcontext skills manifest; fix it or delete it."
        )
    manifest = _empty_manifest()
    manifest["packs"] = {
        name: {"files": {str(k): str(v) for k, v in entry["files"].items()}}
        for name, entry in packs.items()
    }
    dirs = data.get("created_dirs") or []
    manifest["created_dirs"] = [str(d) for d in dirs] if isinstance(dirs, list) else []
    return manifest


def _save_manifest(claude: Path, manifest: dict[str, Any]) -> None:
    ordered = {
        "version": MANIFEST_VERSION,
        "packs": {
            name: {"files": dict(sorted(entry["files"].items()))}
            for name, entry in sorted(manifest["packs"].items())
        },
        "created_dirs": sorted(manifest["created_dirs"]),
    }
    atomic_write_json(claude / MANIFEST_NAME, ordered, within=claude)


def _recorded_hash(manifest: dict[str, Any], relative: str) -> str | None:
    for entry in manifest["packs"].values():
        if relative in entry["files"]:
            return str(entry["files"][relative])
    return None


def _shared_with_other_pack(packs: dict[str, Any], relative: str) -> bool:
    return any(relative in entry["files"] for entry in packs.values())


def _missing_dirs(claude: Path, folder: Path) -> list[str]:
    """Folders from `.claude/` down to `folder` that do not exist yet, relative to the target."""
    missing = []
    current = folder
    while True:
        if not current.exists():
            missing.append(_relative_to_target(claude, current))
        if current == claude:
            break
        current = current.parent
    return missing


def _relative_to_target(claude: Path, path: Path) -> str:
    return path.relative_to(claude.parent).as_posix()


def _prune_dirs(claude: Path, manifest: dict[str, Any]) -> None:
    """Remove the folders the installs created, deepest first, when they are empty."""
    target = claude.parent
    kept = []
    for relative in sorted(manifest["created_dirs"], key=lambda d: (-d.count("/"), d)):
        folder = target / relative
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
        elif folder.is_dir():
            kept.append(relative)
    manifest["created_dirs"] = sorted(kept)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
