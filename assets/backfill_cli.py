"""``dagster-ocr backfill``: a backfill named and tagged with the documents it covers.

A backfill launched from the UI carries only the tags a person types into its launch dialog
("Add tags"): Dagster 1.13 gives a definition no say in a backfill's tags (a job's tags go on its
runs, not on the backfill), and a backfill's tags cannot be changed safely once it exists (the
backfill daemon rewrites the whole backfill as it goes). So the backfills this product launches
are launched here, through the webserver's GraphQL API (the very call the UI's "Launch backfill"
makes): a job backfill of ``ingest_document`` or ``reload_warehouse`` (its runs named after the
job), with ``dagster-ocr/documents`` (how many), ``dagster-ocr/covers`` (the first file names) and
``dagster-ocr/launched_by`` as tags, which the Runs page shows on the backfill's row, and a title
and description that say the same (the backfill's API record keeps them).

A document whose partition was retired after its load (assets/retire.py) has its partition added
again first (``addDynamicPartition``, the UI's "Add partition"); ``dagster-ocr rerun NAME`` is
``backfill ingest_document NAME``.

The documents are named as every command names them (doc_id, partition key, doc_id prefix, file
name) or chosen by their verdict (``--status quarantined``: re-judge every held-back document
after a threshold changed), read from the warehouse.

``--per-run N`` launches ``ingest_documents`` batch runs of N documents instead (assets/batches.py);
``--per-run auto`` does what the inbox sensor does by default: a backfill of one run per document
while there are at most R documents, R balanced batch runs above that, R at least
DAGSTER_OCR_RUNS_PER_TICK (10) and the webserver's instance's ``max_concurrent_runs``, a multiple of
the latter (assets.batches.tick_runs).
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from assets.partitions import tag_value

#: the jobs a backfill of documents runs: every stage, or the load and the gate only (no OCR)
JOBS = ("ingest_document", "reload_warehouse")
DOCUMENTS_TAG = "dagster-ocr/documents"
COVERS_TAG = "dagster-ocr/covers"
LAUNCHED_BY_TAG = "dagster-ocr/launched_by"
#: file names named in the tag and the title; the count says how many more
NAMED = 3
#: Dagster's limit on a backfill's title
MAX_TITLE = 100


def covers(file_names: Sequence[str], named: int = NAMED) -> str:
    """``a.pdf, b.pdf, c.pdf +4 more``: the first file names and how many others."""
    shown = ", ".join(file_names[:named])
    more = len(file_names) - named
    return shown + (f" +{more} more" if more > 0 else "")


def backfill_tags(file_names: Sequence[str], launched_by: str = "dagster-ocr backfill") -> dict[str, str]:
    """The backfill's tags: how many documents, the first file names, and who launched it. They
    are also every run's tags (Dagster copies a backfill's tags onto its runs)."""
    return {
        DOCUMENTS_TAG: str(len(file_names)),
        COVERS_TAG: tag_value(covers(file_names)),
        LAUNCHED_BY_TAG: launched_by,
    }


def backfill_title(job: str, file_names: Sequence[str]) -> str:
    """``reload_warehouse: 3 documents (a.pdf, b.pdf, c.pdf)``, within Dagster's 100 characters and
    without the characters it refuses in a title (``%``, ``*``, ``"``)."""
    n = len(file_names)
    head = f"{job}: {n} document{'s' if n != 1 else ''}"
    title = f"{head} ({covers(file_names)})"
    title = title.replace("%", " ").replace("*", " ").replace('"', "'")
    return title if len(title) <= MAX_TITLE else title[: MAX_TITLE - 2] + "…)"


_LOCATIONS = """
query {
  repositoriesOrError {
    __typename
    ... on RepositoryConnection { nodes { name location { name } jobs { name } } }
    ... on PythonError { message }
  }
}
"""

_LAUNCH = """
mutation Launch($params: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $params) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on Error { message }
  }
}
"""


class BackfillError(RuntimeError):
    """The webserver refused the backfill, or could not be reached."""


def _graphql(url: str, query: str, variables: dict | None = None, timeout: float = 60.0) -> dict:
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    request = urllib.request.Request(
        url.rstrip("/") + "/graphql", data=body, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            answer = json.load(response)
    except (urllib.error.URLError, OSError) as exc:
        raise BackfillError(f"the Dagster webserver at {url} did not answer: {exc}") from exc
    if answer.get("errors"):
        raise BackfillError("; ".join(e.get("message", str(e)) for e in answer["errors"]))
    return answer["data"]


def find_repository(url: str, job: str) -> tuple[str, str]:
    """(location, repository) of the code location that defines ``job``."""
    found = _graphql(url, _LOCATIONS)["repositoriesOrError"]
    if found["__typename"] != "RepositoryConnection":
        raise BackfillError(found.get("message", found["__typename"]))
    for repo in found["nodes"]:
        if any(j["name"] == job for j in repo["jobs"]):
            return repo["location"]["name"], repo["name"]
    raise BackfillError(f"no code location at {url} defines the job {job}")


#: re-adds sent in one GraphQL request (aliased mutations: one HTTP round trip per this many keys)
READD_PER_REQUEST = 100


_LIVE = """
query Live($selector: RepositorySelector!, $name: String!) {
  partitionSetOrError(repositorySelector: $selector, partitionSetName: $name) {
    __typename
    ... on PartitionSet { partitionsOrError { __typename ... on Partitions { results { name } } } }
  }
}
"""


def live_partitions(url: str, selector: dict, job: str = "ingest_document") -> list[str]:
    """The document partitions the instance has now (the live ones: bounded once loaded ones retire)."""
    answer = _graphql(url, _LIVE, {"selector": selector, "name": f"{job}_partition_set"})
    found = answer["partitionSetOrError"]
    parts = found.get("partitionsOrError") or {}
    if found["__typename"] != "PartitionSet" or parts.get("__typename") != "Partitions":
        raise BackfillError(f"listing the partitions: {found['__typename']} {parts.get('__typename', '')}")
    return [p["name"] for p in parts["results"]]


def readd_partitions(url: str, location: str, repository: str, partition_keys: Sequence[str]) -> list[str]:
    """Add the document partitions the instance lacks (retired after their load, assets/retire.py)
    through the webserver (``addDynamicPartition``, the UI's "Add partition"); keys it has are left
    as they are. Returns the keys added."""
    selector = {"repositoryLocationName": location, "repositoryName": repository}
    added: list[str] = []
    live = set(live_partitions(url, selector))  # one request; an add costs ~30-60 ms even when present
    keys = [k for k in dict.fromkeys(partition_keys) if k not in live]
    for start in range(0, len(keys), READD_PER_REQUEST):
        chunk = keys[start : start + READD_PER_REQUEST]
        fields = "\n".join(
            f'a{i}: addDynamicPartition(repositorySelector: $repo, partitionsDefName: "documents", '
            f"partitionKey: $k{i}) {{ __typename ... on PythonError {{ message }} "
            "... on UnauthorizedError { message } }"
            for i in range(len(chunk))
        )
        params = ", ".join(f"$k{i}: String!" for i in range(len(chunk)))
        query = f"mutation Readd($repo: RepositorySelector!, {params}) {{\n{fields}\n}}"
        variables = {"repo": selector} | {f"k{i}": k for i, k in enumerate(chunk)}
        answer = _graphql(url, query, variables)
        for i, key in enumerate(chunk):
            kind = answer[f"a{i}"]["__typename"]
            if kind == "AddDynamicPartitionSuccess":
                added.append(key)
            elif kind != "DuplicateDynamicPartitionError":  # already there: nothing to do
                raise BackfillError(f"adding partition {key}: {kind}: {answer[f'a{i}'].get('message', '')}")
    return added


def backfill_params(
    job: str, location: str, repository: str, partition_keys: Sequence[str], file_names: Sequence[str]
) -> dict[str, Any]:
    """The ``launchPartitionBackfill`` parameters of a named job backfill of ``partition_keys``."""
    return {
        "selector": {
            "partitionSetName": f"{job}_partition_set",
            "repositorySelector": {"repositoryLocationName": location, "repositoryName": repository},
        },
        "partitionNames": list(partition_keys),
        "fromFailure": False,
        "tags": [{"key": k, "value": v} for k, v in backfill_tags(file_names).items()],
        "title": backfill_title(job, file_names),
        "description": f"{job} of {len(file_names)} document(s): " + ", ".join(file_names)[:2000],
    }


def launch_backfill(url: str, job: str, partition_keys: Sequence[str], file_names: Sequence[str]) -> str:
    """Launch a job backfill of ``partition_keys`` through the webserver, re-adding the partitions
    retired since their load first (a backfill of a key the instance lacks is refused); its id."""
    location, repository = find_repository(url, job)
    readd_partitions(url, location, repository, partition_keys)
    params = backfill_params(job, location, repository, partition_keys, file_names)
    result = _graphql(url, _LAUNCH, {"params": params})["launchPartitionBackfill"]
    if result["__typename"] != "LaunchBackfillSuccess":
        raise BackfillError(f"{result['__typename']}: {result.get('message', '')}")
    return result["backfillId"]


_LAUNCH_RUN = """
mutation LaunchRun($params: ExecutionParams!) {
  launchRun(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
    ... on RunConfigValidationInvalid { errors { message } }
  }
}
"""


_RUN_QUEUE = """
query RunQueue { instance { runQueueConfig { maxConcurrentRuns } } }
"""


def queue_limit(url: str) -> int:
    """The webserver's instance's ``max_concurrent_runs`` (what its queue daemon reads); -1: none."""
    config = (_graphql(url, _RUN_QUEUE).get("instance") or {}).get("runQueueConfig")
    return int(config["maxConcurrentRuns"]) if config else -1


def per_run_arg(text: str) -> int | str:
    """``--per-run``: ``auto`` or a number of documents per batch run (0: no batching)."""
    from dagster_ocr.deployment import AUTO

    if text.strip().lower() == AUTO:
        return AUTO
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"'auto' or a number of documents per run, not {text!r}")
    return value


def launch_batches(
    url: str,
    partition_keys: Sequence[str],
    file_names: Sequence[str],
    per_run: int = 0,
    sizes: Sequence[int] | None = None,
) -> list[str]:
    """Batch mode: one ``ingest_documents`` run per ``per_run`` documents (or per batch of ``sizes``,
    dagster_ocr.deployment.batch_sizes), launched through the webserver (``launchRun``, what the
    launchpad sends); each runs its documents' own ``ingest_document`` runs (assets/batches.py).
    Returns the batch runs' ids."""
    from assets.batches import BATCH_JOB, batch_run_config, cut
    from dagster_ocr.deployment import fixed_sizes

    location, repository = find_repository(url, BATCH_JOB)
    if sizes is None:
        sizes = fixed_sizes(len(partition_keys), per_run)
    ids = []
    for keys, names in zip(cut(partition_keys, sizes), cut(file_names, sizes), strict=True):
        params = {
            "selector": {
                "repositoryLocationName": location,
                "repositoryName": repository,
                "jobName": BATCH_JOB,
            },
            "runConfigData": batch_run_config(keys),
            "executionMetadata": {"tags": [{"key": k, "value": v} for k, v in backfill_tags(names).items()]},
        }
        result = _graphql(url, _LAUNCH_RUN, {"params": params})["launchRun"]
        if result["__typename"] != "LaunchRunSuccess":
            detail = result.get("message") or "; ".join(e["message"] for e in result.get("errors", []))
            raise BackfillError(f"{result['__typename']}: {detail} (after {len(ids)} batch run(s) launched)")
        ids.append(result["run"]["runId"])
    return ids


def chosen_documents(wh, refs: Sequence[str], status: str | None) -> list[tuple[str, str, str]]:
    """(doc_id, partition key, file name) of the documents named, or of every one with ``status``."""
    from dagster_ocr.export import resolve_document
    from dagster_ocr.partition_keys import partition_key, recorded_key

    ids = [resolve_document(wh, ref) for ref in refs]
    if status:
        rows = wh.query("SELECT doc_id FROM documents WHERE status = ? ORDER BY file_name", [status])
        ids += [d for d in rows.doc_id if d not in ids]
    out = []
    for doc_id in dict.fromkeys(ids):
        doc = wh.document(doc_id)
        name = str(doc["file_name"]) if doc is not None else doc_id
        out.append((doc_id, recorded_key(wh, doc_id) or partition_key(name, doc_id), name))
    return out


def cmd_backfill(args: argparse.Namespace) -> int:
    from dagster_ocr.export import ExportError
    from dagster_ocr.lake import open_warehouse

    if not args.docs and not args.status:
        print("error: name documents, or choose them with --status", file=sys.stderr)
        return 2
    wh = open_warehouse(args.warehouse, getattr(args, "lake_data", None), read_only=True)
    try:
        docs = chosen_documents(wh, args.docs, args.status)
    except ExportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not docs:
        print(f"no document is {args.status}: nothing to backfill")
        return 0
    keys = [key for _, key, _ in docs]
    names = [name for _, _, name in docs]
    print(backfill_title(args.job, names))
    for key, value in backfill_tags(names).items():
        print(f"  {key}: {value}")
    if args.dry_run:
        print("\n".join(f"  {k}" for k in keys))
        return 0
    per_run = getattr(args, "per_run", 0) or 0
    sizes = None
    if per_run:
        if args.job != "ingest_document":
            print("error: --per-run batches ingest_document only", file=sys.stderr)
            return 2
        from assets.batches import tick_runs
        from dagster_ocr.deployment import AUTO, DeploymentSettings, batch_sizes, fixed_sizes

        if per_run == AUTO:
            try:
                runs = tick_runs(DeploymentSettings.from_env().runs_per_tick, queue_limit(args.url))
            except BackfillError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 1
            sizes = batch_sizes(len(keys), AUTO, runs)
            if sizes is None:
                print(f"{len(keys)} document(s), at most {runs}: one run per document")
        else:
            sizes = fixed_sizes(len(keys), per_run)  # 1 too: a batch run per document
    if sizes is not None:
        try:
            run_ids = launch_batches(args.url, keys, names, sizes=sizes)
        except BackfillError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(f"launched {len(run_ids)} ingest_documents run(s) of up to {max(sizes)} documents each:")
        for run_id in run_ids:
            print(f"  {args.url.rstrip('/')}/runs/{run_id}")
        return 0
    try:
        backfill_id = launch_backfill(args.url, args.job, keys, names)
    except BackfillError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"launched backfill {backfill_id}: {args.url.rstrip('/')}/runs/b/{backfill_id}")
    return 0


def cmd_rerun(args: argparse.Namespace) -> int:
    """``dagster-ocr rerun NAME...``: ``backfill ingest_document NAME...`` (re-adding retired partitions)."""
    args.job, args.status = "ingest_document", None
    return cmd_backfill(args)


def add_backfill_command(sub) -> None:
    """``dagster-ocr backfill`` on the CLI's subcommands."""
    p = sub.add_parser(
        "backfill",
        help="launch a backfill of documents on the Dagster webserver, named and tagged with them",
    )
    p.add_argument("job", choices=JOBS, help="every stage, or the load and the gate only (no OCR)")
    p.add_argument("docs", nargs="*", help="doc_id, partition key, doc_id prefix, or file name")
    p.add_argument(
        "--status", choices=("quarantined", "failed", "parsed"), help="every document with this verdict"
    )
    p.add_argument("--warehouse", required=True, help="where the documents are looked up (read-only)")
    p.add_argument(
        "--url", default="http://127.0.0.1:3000", help="the Dagster webserver (default: make ui's)"
    )
    p.add_argument(
        "--per-run",
        type=per_run_arg,
        default=0,
        metavar="N|auto",
        help="batch mode (ingest_document only): one ingest_documents run per N documents, each document "
        "still its own ingest_document run, instead of a backfill of one run per document; auto: a "
        "backfill while there are at most R documents, else R balanced batch runs, R at least "
        "DAGSTER_OCR_RUNS_PER_TICK (10) and a multiple of the instance's max_concurrent_runs (docs/scale.md)",
    )
    p.add_argument("--dry-run", action="store_true", help="say what would be launched; launch nothing")
    p.set_defaults(func=cmd_backfill)

    r = sub.add_parser(
        "rerun",
        help="re-run documents by name through every stage on the Dagster webserver (ingest_document), "
        "re-adding the partitions retired after their load first",
    )
    r.add_argument("docs", nargs="+", help="file name, doc_id, partition key, or doc_id prefix")
    r.add_argument("--warehouse", required=True, help="where the documents are looked up (read-only)")
    r.add_argument("--url", default="http://127.0.0.1:3000", help="the Dagster webserver")
    r.add_argument(
        "--per-run", type=per_run_arg, default=0, metavar="N|auto", help="batch mode, as for backfill"
    )
    r.add_argument("--dry-run", action="store_true", help="say what would be launched; launch nothing")
    r.set_defaults(func=cmd_rerun)
