"""Action categories across harnesses: shell commands, fenced bash, editor tools, MCP tools, SQL, wrappers."""

from __future__ import annotations

import pytest

from stopwise.early._categories import CATEGORIES, categorize_action, split_action

CASES = [
    # shell tools (Toolathlon terminal, OpenHands bash, ...)
    ('terminal-run_command({"command": "cd repo && git log --oneline"})', "terminal-run_command", "git", "shell"),
    ('bash({"command": "python -m pytest tests/ -q"})', "bash", "test", "shell"),
    ('bash({"command": "grep -rn foo src | head"})', "bash", "search", "shell"),
    ('bash({"command": "cat src/a.py"})', "bash", "view", "shell"),
    ('bash({"command": "sed -i s/a/b/ src/a.py"})', "bash", "edit_replace", "shell"),
    ('bash({"command": "echo hi > notes.txt"})', "bash", "edit_create", "shell"),
    ('bash({"command": "echo hi >> notes.txt"})', "bash", "edit_insert", "shell"),
    ('bash({"command": "rm -rf build"})', "bash", "edit_delete", "shell"),
    ('bash({"command": "python3 reproduce.py"})', "bash", "python", "shell"),
    ('bash({"command": "npm test"})', "bash", "test", "shell"),
    ('bash({"command": "make build"})', "bash", "cli", "shell"),
    ('bash({"command": "submit"})', "bash", "submit", "shell"),
    # tool-less harness with a fenced command (mini-SWE-agent)
    ("Let me look.\n```bash\nls -la src\n```", None, "search", "shell"),
    ("Done.\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```", None, "submit", "shell"),
    # SWE-agent style editor
    ('str_replace_editor({"command": "str_replace", "path": "/r/a.py", "old_str": "x", "new_str": "y"})', "str_replace_editor", "edit_replace", "editor"),
    ('str_replace_editor({"command": "view", "path": "/r/a.py"})', "str_replace_editor", "view", "editor"),
    ('str_replace_editor({"command": "undo_edit", "path": "/r/a.py"})', "str_replace_editor", "edit_delete", "editor"),
    ('str_replace_editor({"command": "insert", "path": "/r/a.py", "insert_line": 3})', "str_replace_editor", "edit_insert", "editor"),
    # Python execution tools
    ('local-python-execute({"code": "print(1)"})', "local-python-execute", "python", "python"),
    ('execute_code({"code": "import pytest; pytest.main()"})', "execute_code", "test", "python"),
    # SQL tools
    ('execute_sql({"query": "SELECT * FROM t"})', "execute_sql", "view", "sql"),
    ('run-raw-sql({"query": "-- add\\nINSERT INTO t VALUES (1)"})', "run-raw-sql", "edit_insert", "sql"),
    ('execute_sql({"query": "BEGIN; UPDATE t SET a = 1; COMMIT;"})', "execute_sql", "edit_replace", "sql"),
    ('apply_migration({"query": "CREATE TABLE x (a int)"})', "apply_migration", "edit_create", "sql"),
    ('google-cloud-bigquery_run_query({"query": "SELECT a FROM `d.t`"})', "google-cloud-bigquery_run_query", "view", "sql"),
    # MCP tools named by verbs
    ('API-post-search({"query": "x"})', "API-post-search", "search", "name"),
    ('API-post-page({"parent": {}})', "API-post-page", "edit_create", "name"),
    ('API-patch-block-children({"block_id": "1"})', "API-patch-block-children", "edit_replace", "name"),
    ('API-delete-a-block({"block_id": "1"})', "API-delete-a-block", "edit_delete", "name"),
    ('API-retrieve-a-page({"page_id": "1"})', "API-retrieve-a-page", "view", "name"),
    ('filesystem-read_file({"path": "/a"})', "filesystem-read_file", "view", "name"),
    ('word-add_paragraph({"text": "x"})', "word-add_paragraph", "edit_insert", "name"),
    ('create_pull_request({"title": "x"})', "create_pull_request", "git", "name"),
    ('push_files({"files": []})', "push_files", "git", "name"),
    ('create_or_update_file({"path": "a.md"})', "create_or_update_file", "edit_create", "name"),
    ('local-claim_done({})', "local-claim_done", "submit", "name"),
    ('canvas-canvas_submit_quiz_answers({"answers": []})', "canvas-canvas_submit_quiz_answers", "edit_create", "name"),
    ('playwright-browser_click({"ref": "e1"})', "playwright-browser_click", "other", "name"),
    # wrapper tools that name the inner action (Klavis MCP)
    ('execute_action({"server_name": "GitHub", "action_name": "list_commits"})', "execute_action", "git", "wrapper"),
    ('execute_action({"server_name": "Notion", "action_name": "delete_a_block"})', "execute_action", "edit_delete", "wrapper"),
    ('get_action_details({"category_name": "X", "action_name": "create_issue"})', "get_action_details", "view", "name"),
    # messages
    ("I am done.", None, "message", "text"),
    ("", None, "message", "none"),
    ("", "__user__", "message", "user"),
]


@pytest.mark.parametrize(("action", "tool", "category", "channel"), CASES)
def test_rules_across_harnesses(action: str, tool: str | None, category: str, channel: str) -> None:
    got = categorize_action(action, tool)
    assert (got.category, got.channel) == (category, channel)
    assert got.category in CATEGORIES


def test_a_fenced_block_without_an_answer_is_a_message() -> None:
    """A final summary quoting a command got no observation: it is a message, not a command."""
    text = "Summary of what I did:\n```bash\ngit push\n```"
    assert categorize_action(text, None, has_output=False).category == "message"
    assert categorize_action(text, None, has_output=True).category == "git"


def test_shell_counts_commands_and_takes_the_strongest() -> None:
    got = categorize_action('bash({"command": "cd r && ls && python -m pytest && git status"})', "bash")
    assert got.category == "test"
    assert got.n_calls == 3  # cd is not a command of its own


def test_split_action_reasoning_and_call() -> None:
    assert split_action('Plan.\nMore plan.\ntool_x({"a": 1})', "tool_x") == ("Plan.\nMore plan.", 'tool_x({"a": 1})')
    assert split_action('tool_x({"a": 1})', "tool_x") == ("", 'tool_x({"a": 1})')
    assert split_action("free text", "tool_x") == ("", "free text")
