"""Execute the chapters under their mutants and print the kill table (``make mutants``).

Every job is one fresh kernel running one chapter, with an unsaved setup cell in
front of the chapter's cells that installs the mutant (:func:`mutants.patch.install`)
before the chapter's own imports. nbclient stops at the first cell that raises:
that cell, and the statement that raised, are the kill. A mutant with ``until``
runs only up to that cell. Controls (``control:<chapter>``) wrap every function
the chapter's mutants target in a pass-through and must run the whole chapter.

The kernel's working directory is a scratch copy of the repository's layout
(``chapters/`` empty, ``data/`` copied, the rest linked), so a chapter that writes
into ``../data`` under a mutant never touches the repository.

Usage: python -m mutants.run [--jobs N] [--only NAME ...] [--chapter CHAPTER ...] [--list]
Exit status 1 if a mutant survives, a control fails or a job cannot run.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

ROOT = Path(__file__).resolve().parent.parent
ANSI = re.compile(r"\x1b\[[0-9;]*m")
COPIED, FRESH, SKIPPED = {"data"}, {"chapters"}, {".git", ".venv", "_build", "mutants"}


@dataclass(frozen=True)
class Job:
    name: str          # catalog name, or control:<chapter>
    chapter: str
    target: str
    what: str
    subtle: bool
    until: str | None
    notebook: str      # path of the chapter notebook


@dataclass(frozen=True)
class Outcome:
    job: Job
    status: str        # "killed" | "survived" | "passed" | "failed" | "error" ("listed": not run)
    cell: str          # id of the cell that raised ("" if none)
    check: str         # exception and the first line of the statement that raised
    seconds: float

    @property
    def ok(self) -> bool:
        return self.status == ("passed" if self.job.name.startswith("control:") else "killed")


def jobs_from_catalog(mutants, chapters_dir: Path) -> list[Job]:
    """One control per chapter (first), then the mutants, in catalog order."""
    from mutants.catalog import targets_of

    chapters = list(dict.fromkeys(m.chapter for m in mutants))
    controls = [Job(f"control:{c}", c, ", ".join(targets_of(c, mutants)), "none (pass-through wrappers)",
                    False, None, str(chapters_dir / f"{c}.ipynb")) for c in chapters]
    return controls + [Job(m.name, m.chapter, m.target, m.what, m.subtle, m.until,
                           str(chapters_dir / f"{m.chapter}.ipynb")) for m in mutants]


def _scratch(tmp: Path) -> Path:
    for entry in ROOT.iterdir():
        if entry.name in SKIPPED:
            continue
        if entry.name in COPIED:
            shutil.copytree(entry, tmp / entry.name)
        elif entry.name in FRESH:
            (tmp / entry.name).mkdir()
        else:
            (tmp / entry.name).symlink_to(entry)
    return tmp / "chapters"


def _setup_cell(name: str, catalog_module: str, sys_path: tuple[str, ...]) -> nbformat.NotebookNode:
    paths = (str(ROOT), *sys_path)
    source = (f"import sys as _s\n_s.path[:0] = {list(paths)!r}\n"
              "import importlib as _l\nfrom mutants.patch import install as _i\n"
              f"_i({name!r}, catalog=_l.import_module({catalog_module!r}))\n"
              "del _s, _l, _i")
    return nbformat.v4.new_code_cell(source)


def _statement(source: str, line: int) -> str:
    """First line of the innermost statement of ``source`` that spans ``line``."""
    lines = source.splitlines()
    best = None
    try:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno):
                if best is None or node.lineno >= best.lineno:
                    best = node
    except SyntaxError:
        pass
    start = best.lineno if best is not None else line
    return lines[start - 1].strip() if 0 < start <= len(lines) else ""


def _failure(nb: nbformat.NotebookNode) -> tuple[str, str]:
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                text = ANSI.sub("", "\n".join(out.get("traceback", [])))
                where = re.search(r"Cell In\[\d+\], line (\d+)", text)
                stmt = _statement(cell.source, int(where.group(1))) if where else ""
                cell_id = cell.get("id", str(index)) if index else "setup"
                return cell_id, f"{out.get('ename')}: {stmt}" if stmt else str(out.get("ename"))
    return "", ""


def run_job(job: Job, catalog_module: str = "mutants.catalog", sys_path: tuple[str, ...] = (),
            timeout: int = 600) -> Outcome:
    """Execute one chapter under one mutant (or control) in a fresh kernel."""
    start = time.perf_counter()
    nb = nbformat.read(job.notebook, as_version=4)
    if job.until is not None:
        ids = [c.get("id") for c in nb.cells]
        if job.until not in ids:
            return Outcome(job, "error", "", f"no cell {job.until!r} in {job.notebook}", 0.0)
        nb.cells = nb.cells[: ids.index(job.until) + 1]
    nb.cells.insert(0, _setup_cell(job.name, catalog_module, sys_path))
    with tempfile.TemporaryDirectory(prefix="mutant-") as tmp:
        # immediate shutdown: the kernel's state is thrown away anyway, and a graceful
        # one waits about half a second per job
        client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=False,
                                record_timing=False, shutdown_kernel="immediate",
                                resources={"metadata": {"path": str(_scratch(Path(tmp)))}})
        log = Path(tmp) / "kernel.log"
        with log.open("w") as stderr:  # the kernel process's own chatter, not cell output
            try:
                client.execute(stderr=stderr)
                raised = False
            except CellExecutionError:
                raised = True
            except (CellTimeoutError, DeadKernelError) as exc:
                tail = " | ".join(log.read_text().strip().splitlines()[-3:])
                return Outcome(job, "error", "", f"{type(exc).__name__} {tail}", time.perf_counter() - start)
    seconds = time.perf_counter() - start
    cell, check = _failure(nb) if raised else ("", "")
    if cell == "setup":
        return Outcome(job, "error", cell, check, seconds)
    control = job.name.startswith("control:")
    status = ("failed" if raised else "passed") if control else ("killed" if raised else "survived")
    return Outcome(job, status, cell, check, seconds)


def table(outcomes: list[Outcome]) -> str:
    """The kill table, as Markdown (pastes into an issue note)."""
    rows = ["| mutant | chapter | target | what is wrong | killed? | by (cell: statement) | s |",
            "|---|---|---|---|---|---|---|"]
    for o in outcomes:
        j = o.job
        name = j.name + (" (subtle)" if j.subtle else "") + (f" [to {j.until}]" if j.until else "")
        verdict = {"killed": "yes", "survived": "**NO**", "passed": "control ok",
                   "failed": "**control failed**", "error": "**error**", "listed": "not run"}[o.status]
        by = f"{o.cell}: `{o.check}`" if o.cell else (o.check or "-")
        target = j.target.removeprefix("egmlib.") if not j.name.startswith("control:") else "(its targets)"
        cells = (name, j.chapter, target, j.what, verdict, by)
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + f" | {o.seconds:.1f} |")
    return "\n".join(rows)


def run(jobs: list[Job], workers: int = 2, catalog_module: str = "mutants.catalog",
        sys_path: tuple[str, ...] = (), progress: bool = False) -> tuple[list[Outcome], int]:
    """Run the jobs on ``workers`` processes; return the outcomes (job order) and the exit status."""
    # one BLAS thread per kernel: the workers, not the kernels, use the cores
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    # longest first (seconds of the previous run, kept in _build, else the shipped
    # mutants/seconds.json), so that the workers finish together; the table keeps the catalog order
    previous = _load_times()
    order = sorted(range(len(jobs)), key=lambda i: -previous.get(jobs[i].name, float("inf")))
    done: dict[int, Outcome] = {}
    with ProcessPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = {pool.submit(run_job, jobs[i], catalog_module, sys_path): i for i in order}
        for k, future in enumerate(as_completed(futures), start=1):
            o = done[futures[future]] = future.result()
            if progress:
                print(f"[{k:>2}/{len(jobs)}] {o.job.name}: {o.status} {o.cell} ({o.seconds:.1f} s)", flush=True)
    outcomes = [done[i] for i in range(len(jobs))]
    if catalog_module == "mutants.catalog":
        _save_times(previous | {o.job.name: o.seconds for o in outcomes})
    return outcomes, exit_status(outcomes)


TIMES = ROOT / "_build" / "mutant-seconds.json"


#: Seconds per job of a run on two idle cores, committed: the order on a fresh clone.
SHIPPED_TIMES = Path(__file__).with_name("seconds.json")


def _load_times() -> dict[str, float]:
    for path in (TIMES, SHIPPED_TIMES):
        try:
            return {str(k): float(v) for k, v in json.loads(path.read_text()).items()}
        except (OSError, ValueError, AttributeError):
            continue
    return {}


def _save_times(times: dict[str, float]) -> None:
    try:
        TIMES.parent.mkdir(exist_ok=True)
        TIMES.write_text(json.dumps(times, indent=0, sort_keys=True))
    except OSError:
        pass


def exit_status(outcomes: list[Outcome]) -> int:
    """1 if a mutant survived, a control failed or a job could not run; else 0."""
    return int(not all(o.ok for o in outcomes))


def main(argv: list[str] | None = None) -> int:
    from mutants import catalog

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--only", nargs="*", default=None, help="run only these mutants (and their controls)")
    parser.add_argument("--chapter", nargs="*", default=None, help="run only these chapters")
    parser.add_argument("--no-controls", action="store_true", help="skip the controls")
    parser.add_argument("--list", action="store_true", help="list the catalog and exit")
    args = parser.parse_args(argv)

    unknown = set(args.only or ()) - {m.name for m in catalog.MUTANTS}
    unknown |= set(args.chapter or ()) - {m.chapter for m in catalog.MUTANTS}
    if unknown:
        parser.error(f"not in mutants/catalog.py: {', '.join(sorted(unknown))}")
    chosen = [m for m in catalog.MUTANTS
              if (args.only is None or m.name in args.only) and (args.chapter is None or m.chapter in args.chapter)]
    jobs = jobs_from_catalog(chosen, ROOT / "chapters")
    if args.no_controls:
        jobs = [j for j in jobs if not j.name.startswith("control:")]
    if args.list:
        print(table([Outcome(j, "listed", "", "", 0.0) for j in jobs]))
        return 0
    start = time.perf_counter()
    outcomes, status = run(jobs, workers=args.jobs, progress=True)
    print(table(outcomes))
    mutants = [o for o in outcomes if not o.job.name.startswith("control:")]
    controls = [o for o in outcomes if o.job.name.startswith("control:")]
    print(f"\n{sum(o.status == 'killed' for o in mutants)} of {len(mutants)} mutants killed "
          f"({sum(o.job.subtle for o in mutants)} subtle); "
          f"{sum(o.status == 'passed' for o in controls)} of {len(controls)} controls passed; "
          f"{len(jobs)} chapter runs on {args.jobs} workers in {time.perf_counter() - start:.0f} s")
    for o in outcomes:
        if not o.ok:
            print(f"FAIL {o.job.name}: {o.status} {o.cell} {o.check}", file=sys.stderr)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
