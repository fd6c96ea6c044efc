"""`run --anthropic-base-url`: an Anthropic model called through a proxy or gateway, with
the consent rules of `--base-url`: named this time it is used and recorded (never its
credentials); recorded in a folder, it gets the calls and the key only once allowed."""

from __future__ import annotations

from stub_server import StubServer

from dreamcontext_council.folder import frontmatter_io

from .support import OPTIONS, TEST_KEY, TOPIC, Council, request_task, scripted_responder

MODEL = "anthropic:claude-sonnet-5-5"
KEY_ONLY = {"ANTHROPIC_API_KEY": TEST_KEY}  # no ANTHROPIC_BASE_URL: the flag names the server


def test_the_flag_sends_the_calls_there_and_is_recorded_without_credentials(
    council: Council,
) -> None:
    secret = "gateway-secret-0123456789"
    with StubServer(responder=scripted_responder) as gateway:
        url = gateway.url
        named = url.replace("://", f"://user:{secret}@")
        result = council(
            "run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "1",
            "--model", MODEL, "--synth-model", "scripted", "--anthropic-base-url", named,
            env=KEY_ONLY,
        )  # fmt: skip
        asked = [request_task(r.json) for r in gateway.requests]

    assert result.code == 0, result.err
    assert {task["phase"] for task in asked} == {"opening"}
    debate_id = result.last_line
    run = council.meta(debate_id)["run"]
    assert run["anthropic_base_url"] == url
    assert run["anthropic_base_url_secret"] is True
    assert secret not in council.text(debate_id, "debate.md")
    # Its credentials were not stored: a resume asks for the flag again.
    again = council("run", debate_id, env=KEY_ONLY)
    assert again.code == 2
    assert "--anthropic-base-url" in again.err and secret not in again.err


def test_a_folder_that_recorded_another_server_is_refused_until_it_is_named(
    council: Council,
) -> None:
    with StubServer(responder=scripted_responder) as gateway:
        first = council(
            "run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "2", "--max-calls", "2",
            "--model", MODEL, "--synth-model", "scripted", "--anthropic-base-url", gateway.url,
            env=KEY_ONLY,
        )  # fmt: skip
        debate_id = council.only_id()
        assert first.code != 0 and len(gateway.requests) == 2  # stopped by --max-calls
        # As someone else's folder would have it: another server recorded.
        with StubServer(responder=scripted_responder) as elsewhere:
            path = council.folder(debate_id) / "debate.md"
            meta, body = frontmatter_io.parse(path.read_text("utf-8"), "debate.md")
            meta["run"] = {**meta["run"], "anthropic_base_url": elsewhere.url}
            path.write_text(frontmatter_io.render(meta, body), encoding="utf-8")

            refused = council("run", debate_id, "--max-calls", "4", env=KEY_ONLY)

            assert refused.code == 2
            [line] = refused.err.strip().splitlines()
            assert "run.anthropic_base_url" in line
            assert f"--anthropic-base-url {elsewhere.url}" in line
            assert elsewhere.requests == []  # not so much as connected to

            named = council(
                "run", debate_id, "--max-calls", "4", "--anthropic-base-url", elsewhere.url,
                env=KEY_ONLY,
            )  # fmt: skip
            assert len(elsewhere.requests) >= 2, named.err
            # Allowed for this folder now: a resume goes there without the flag.
            resumed = council("run", debate_id, env=KEY_ONLY)
            assert resumed.code == 0, resumed.err
