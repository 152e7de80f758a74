"""Action categories recognised by rules that work across harnesses.

An action reaches us as a tool name (possibly ``None``) and the action text, which may hold the
agent's visible reasoning followed by the call ``tool(arguments_json)``, a shell command, a fenced
``bash`` block, SQL, or a wrapper call naming an inner action (``execute_action(action_name=...)``).
The rules read, in order: the harness channel (no tool, shell, Python, SQL, editor, wrapper),
then the verbs of the tool name (``create_pull_request`` → git, ``API-post-search`` → search).
They never look at the outcome or at anything after the step.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["CATEGORIES", "CHANNELS", "ActionCategory", "categorize_action", "split_action"]

CATEGORIES: tuple[str, ...] = (
    "message",
    "view",
    "search",
    "edit_create",
    "edit_replace",
    "edit_insert",
    "edit_delete",
    "test",
    "python",
    "cli",
    "git",
    "submit",
    "other",
)
"""Every action category, in feature order: plain message, file/resource view, search, the four edit kinds
(create, replace, insert, delete/undo), test run, Python run, other command-line run, git operation,
the agent's own submission, and anything else."""

CHANNELS: tuple[str, ...] = ("none", "text", "user", "shell", "python", "sql", "editor", "wrapper", "name")
"""The sub-type of an action: the channel through which its category was recognised."""

EDITS: frozenset[str] = frozenset({"edit_create", "edit_replace", "edit_insert", "edit_delete"})
READS: frozenset[str] = frozenset({"view", "search"})
RUNS: frozenset[str] = frozenset({"test", "python", "cli"})


@dataclass(frozen=True)
class ActionCategory:
    """What an action does, as recognised by the rules.

    Attributes
    ----------
    category : str
        One of :data:`CATEGORIES`.
    channel : str
        One of :data:`CHANNELS`: how the category was recognised.
    n_calls : int
        Number of calls or commands in the action (0 for a plain message).
    """

    category: str
    channel: str
    n_calls: int = 1


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_FENCE = re.compile(r"```(?:bash|sh|shell|console)?\s*\n(.*?)```", re.DOTALL)


def _tokens(name: str) -> list[str]:
    return [t for t in _NON_ALNUM.split(_CAMEL.sub(" ", name).lower()) if t]


def split_action(action: str, tool: str | None) -> tuple[str, str]:
    r"""Split an action into (visible reasoning, call text).

    The call is the last line that starts with ``tool(``; without a tool (or when the call is not
    found) the whole text is the call for tools and the reasoning for plain messages.

    Examples
    --------
    >>> split_action('Let me look.\nread_file({"path": "a.py"})', "read_file")
    ('Let me look.', 'read_file({"path": "a.py"})')
    >>> split_action("All done.", None)
    ('All done.', '')
    """
    if not tool:
        return action, ""
    marker = tool + "("
    if action.startswith(marker):
        return "", action
    at = action.rfind("\n" + marker)
    if at < 0:
        return "", action
    return action[:at].strip(), action[at + 1 :]


def _arguments(call: str, tool: str) -> dict[str, Any]:
    marker = tool + "("
    if not call.startswith(marker):
        return {}
    body = call[len(marker) :].rstrip()
    if body.endswith(")"):
        body = body[:-1]
    body = body.strip()
    if not body.startswith("{"):
        return {}
    try:
        value = json.loads(body)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# ---------------------------------------------------------------- shell commands
_SHELL_SPLIT = re.compile(r"&&|\|\||;|\||\n")
_TEST_WORDS = {"pytest", "py.test", "tox", "nox", "jest", "mocha", "vitest", "phpunit", "rspec", "ctest"}
_TEST_RUNNERS = {"npm", "yarn", "pnpm", "go", "cargo", "make", "mvn", "gradle", "bun", "dotnet", "mix"}
_VIEW_WORDS = {"cat", "head", "tail", "less", "more", "nl", "bat", "wc", "stat", "file", "view", "open", "xxd"}
_SEARCH_WORDS = {"grep", "rg", "ag", "ack", "find", "fd", "locate", "ls", "tree", "du", "which", "whereis"}
_PY_WORDS = {"python", "python3", "python2", "ipython", "pip", "pip3", "uv", "poetry", "conda"}
_SUBMIT_WORDS = {"submit", "complete_task_and_submit_final_output"}
_PREFIX_WORDS = {"sudo", "timeout", "env", "time", "nohup", "exec", "command", "builtin", "xargs"}


def _shell_segment(segment: str) -> str | None:
    words = segment.strip().strip("()").split()
    while words and (words[0] in _PREFIX_WORDS or "=" in words[0] or words[0].isdigit() or words[0].startswith("-")):
        words = words[1:]
    if not words:
        return None
    head = words[0].rsplit("/", 1)[-1].lower()
    rest = [w.lower() for w in words[1:]]
    text = segment.lower()
    if head in _SUBMIT_WORDS or "complete_task_and_submit_final_output" in text:
        return "submit"
    if head == "cd":
        return None
    if head in _TEST_WORDS or "unittest" in rest or "pytest" in rest or "runtests" in head:
        return "test"
    if head in _TEST_RUNNERS and "test" in rest:
        return "test"
    if head == "git":
        return "git"
    if head in ("sed", "perl") and any(w.startswith("-i") for w in rest):
        return "edit_replace"
    if head in ("patch", "applypatch", "apply_patch"):
        return "edit_replace"
    if head in ("rm", "rmdir", "unlink"):
        return "edit_delete"
    if head in ("mv",):
        return "edit_replace"
    if head in ("touch", "mkdir", "cp"):
        return "edit_create"
    if head == "tee":
        return "edit_insert" if "-a" in rest else "edit_create"
    if ">>" in segment:
        return "edit_insert"
    if re.search(r"(?<![0-9&>])>(?!&)", segment) and head in ("echo", "printf", "cat", "cat<<", "printf'"):
        return "edit_create"
    if head in _PY_WORDS or head.startswith("python"):
        return "python"
    if head == "sed" and "-n" in rest:
        return "view"
    if head in _VIEW_WORDS:
        return "view"
    if head in _SEARCH_WORDS:
        return "search"
    return "cli"


_SHELL_PRIORITY = (
    "submit",
    "test",
    "git",
    "edit_create",
    "edit_delete",
    "edit_insert",
    "edit_replace",
    "python",
    "search",
    "view",
    "cli",
)


def _shell(command: str) -> tuple[str, int]:
    kinds = [k for k in (_shell_segment(s) for s in _SHELL_SPLIT.split(command)) if k is not None]
    if not kinds:
        return "cli", 1
    for kind in _SHELL_PRIORITY:
        if kind in kinds:
            return kind, len(kinds)
    return "cli", len(kinds)  # pragma: no cover - every kind is in the priority list


# ---------------------------------------------------------------- SQL
_SQL_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/", re.DOTALL)
_SQL_STATEMENT = re.compile(r"(?:^|;)\s*([A-Za-z]+)")
_SQL_KIND = {
    "select": "view",
    "with": "view",
    "show": "view",
    "explain": "view",
    "describe": "view",
    "desc": "view",
    "table": "view",
    "values": "view",
    "create": "edit_create",
    "insert": "edit_insert",
    "copy": "edit_insert",
    "update": "edit_replace",
    "alter": "edit_replace",
    "rename": "edit_replace",
    "comment": "edit_replace",
    "grant": "edit_replace",
    "revoke": "edit_replace",
    "merge": "edit_replace",
    "refresh": "edit_replace",
    "do": "edit_replace",
    "call": "edit_replace",
    "delete": "edit_delete",
    "drop": "edit_delete",
    "truncate": "edit_delete",
}
_SQL_PRIORITY = ("edit_create", "edit_delete", "edit_insert", "edit_replace", "view")
_SQL_OBJECTS = r"(?:table|index|view|function|schema|trigger|policy|type|extension|role|sequence|materialized|procedure|database)"
_SQL_START = re.compile(
    r"^\s*(?:--[^\n]*\n\s*)*(?:select\b[\s\S]*\bfrom\b|with\s+\w+\s+as\s*\(|insert\s+into\b|update\s+\S+\s+set\b"
    r"|delete\s+from\b|(?:create|alter|drop)\s+(?:or\s+replace\s+)?(?:unique\s+)?" + _SQL_OBJECTS + r"\b|explain\b|show\s+\w+)",
    re.I,
)


def _sql(query: str) -> tuple[str, int]:
    text = _SQL_COMMENT.sub(" ", query)
    kinds = [_SQL_KIND.get(m.group(1).lower()) for m in _SQL_STATEMENT.finditer(text)]
    found = [k for k in kinds if k is not None]
    for kind in _SQL_PRIORITY:
        if kind in found:
            return kind, max(1, len(found))
    return "view", 1


# ---------------------------------------------------------------- verbs of tool names
_SUBMIT_NAMES = (
    {"submit"},
    {"claim", "done"},
    {"finish"},
    {"final", "answer"},
    {"attempt", "completion"},
    {"task", "complete"},
    {"complete", "task"},
    {"task", "done"},
)
_SHELL_NAMES = {"bash", "shell", "terminal", "sh", "cmd", "console"}
_SHELL_PAIRS = ({"run", "command"}, {"execute", "command"}, {"exec", "command"}, {"run", "shell"})
_PYTHON_NAMES = {"python", "ipython", "jupyter", "notebook"}
_GIT_WORDS = {"git", "commit", "commits", "branch", "branches", "pull", "merge", "push", "rebase", "tag", "tags", "checkout", "cherry", "fork", "repository"}
_HTTP_VERBS = {"get": "view", "post": "edit_create", "put": "edit_replace", "patch": "edit_replace", "delete": "edit_delete"}
_VERBS: dict[str, str] = {}
for _category, _words in (
    ("edit_delete", "delete remove undo revert drop clear archive trash uninstall unset unenroll cancel"),
    ("edit_insert", "insert append add attach enroll"),
    ("edit_create", "create new write upload make mkdir copy duplicate send submit publish invite import generate save post"),
    ("edit_replace", "update edit replace modify set rename move format change apply configure fill reply highlight"
     " shade shading align alignment resize sort reorder assign label close reopen lock unlock mark"),
    ("search", "search find grep query discover lookup explore filter locate match scan"),
    ("view", "get read view retrieve list show open cat fetch describe download snapshot info metadata inspect"
     " navigate browse screenshot load print head tail explain check status stat tree directory analyze peek"
     " preview count schema logs details"),
    ("test", "test tests pytest verify validate"),
):
    for _word in _words.split():
        _VERBS.setdefault(_word, _category)


def _by_name(tokens: list[str]) -> str:
    token_set = set(tokens)
    for pattern in _SUBMIT_NAMES:
        if pattern == token_set or (len(pattern) > 1 and pattern <= token_set and len(token_set) <= len(pattern) + 1):
            return "submit"
    verbs = [t for t in tokens if t in _VERBS and t not in _HTTP_VERBS]
    if token_set & {"git", "commit", "commits", "push", "merge", "rebase", "cherry"}:
        return "git"
    if token_set & _GIT_WORDS and not token_set & {"file", "files", "content", "contents", "issue", "issues", "comment"}:
        return "git"
    if verbs:
        return _VERBS[verbs[0]]
    http = [t for t in tokens if t in _HTTP_VERBS]
    if http:
        return _HTTP_VERBS[http[0]]
    return "other"


_EDITOR_COMMANDS = {
    "view": "view",
    "create": "edit_create",
    "str_replace": "edit_replace",
    "replace": "edit_replace",
    "insert": "edit_insert",
    "undo_edit": "edit_delete",
    "undo": "edit_delete",
}


def _string_arg(args: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return "\n".join(value)
    return None


def categorize_action(action: str, tool: str | None, *, has_output: bool | None = None) -> ActionCategory:
    """Recognise what an action does from its text and tool name.

    Parameters
    ----------
    action : str
        The step's action text (reasoning and call, a shell command, or a message).
    tool : str or None
        The tool or function name, when the harness records one.
    has_output : bool, optional
        Whether the environment answered the step. A tool-less step that got no answer is a plain
        message even when it quotes a fenced shell block (a final summary, not a command).

    Returns
    -------
    ActionCategory
        The category (one of :data:`CATEGORIES`), the channel and the number of calls.

    Examples
    --------
    >>> categorize_action("cd repo && python -m pytest tests/", "bash").category
    'test'
    >>> categorize_action('execute_sql({"query": "DROP TABLE t"})', "execute_sql").category
    'edit_delete'
    >>> categorize_action('API-post-search({"query": "x"})', "API-post-search").category
    'search'
    >>> categorize_action("I am done.", None)
    ActionCategory(category='message', channel='text', n_calls=0)
    """
    _, call = split_action(action, tool)
    if not tool:
        fenced = _FENCE.findall(action) if has_output is not False else []
        if fenced:
            kind, n = _shell("\n".join(fenced))
            return ActionCategory(kind, "shell", n)
        return ActionCategory("message", "text" if action.strip() else "none", 0)
    if tool == "__user__":
        return ActionCategory("message", "user", 0)
    tokens = _tokens(tool)
    token_set = set(tokens)
    args = _arguments(call, tool)
    inner = _string_arg(args, "action_name", "tool_name", "function_name")
    if inner is not None and token_set & {"execute", "call", "invoke", "run", "use"}:
        category = categorize_action(f"{inner}({json.dumps(args.get('path_params', {}))})", inner)
        return ActionCategory(category.category, "wrapper", category.n_calls)
    command = _string_arg(args, "command", "cmd", "commands", "script")
    editor_command = args.get("command")
    if isinstance(editor_command, str) and editor_command in _EDITOR_COMMANDS and ("path" in args or "file" in token_set):
        return ActionCategory(_EDITOR_COMMANDS[editor_command], "editor", 1)
    if token_set & _SHELL_NAMES or any(pair <= token_set for pair in _SHELL_PAIRS):
        if command is None:
            command = call[len(tool) + 1 :] if call.startswith(tool + "(") else call
        kind, n = _shell(command)
        return ActionCategory(kind, "shell", n)
    if token_set & _PYTHON_NAMES or {"execute", "code"} <= token_set or {"run", "code"} <= token_set:
        code = _string_arg(args, "code", "source", "script", "input") or call
        low = code.lower()
        kind = "test" if ("pytest" in low or "unittest" in low) else "python"
        return ActionCategory(kind, "python", 1)
    query = _string_arg(args, "query", "sql", "statement")
    if "sql" in token_set or "migration" in token_set or (query is not None and _SQL_START.match(query)):
        if query is None and "migration" in token_set:
            return ActionCategory("edit_replace", "sql", 1)
        kind, n = _sql(query or call)
        return ActionCategory(kind, "sql", n)
    return ActionCategory(_by_name(tokens), "name", 1)
