"""The redactor's cut: redacted first, never split, and a secret's start at the cut is a secret."""

from __future__ import annotations

from replio_replay._runtime.redact import REDACTED, Redactor, shown_url, url_secrets

KEY = "sk-cut-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"


def test_a_key_across_the_cut_is_redacted_whole() -> None:
    assert Redactor((KEY,)).cut("x" * 40 + KEY + " tail", 80) == "x" * 40 + REDACTED + " tail"


def test_the_cut_never_splits_the_mark() -> None:
    assert Redactor((KEY,)).cut("x" * 75 + KEY + "y" * 20, 80) == "x" * 75 + REDACTED + "..."


def test_a_start_of_a_key_where_the_text_is_cut_is_a_secret() -> None:
    # the text itself was cut before (the key's end is not in it): its end is a cut point too
    cut = Redactor((KEY,)).cut("x" * 76 + KEY[:12], 80, more=" ({left} more)")
    assert cut == "x" * 76 + REDACTED + " (8 more)"
    assert Redactor((KEY,)).cut("x" * 77 + "sk-" + "y" * 10, 80) == "x" * 77 + "sk-..."  # 3 characters say nothing


def test_the_cut_counts_what_it_left_out_of_the_redacted_text() -> None:
    assert Redactor((KEY,)).cut(KEY + "z" * 20, 15, more="[{left} more]") == REDACTED + "zzzzz[15 more]"


def test_a_key_in_a_url_query_is_a_secret_and_never_shown() -> None:
    url = "http://user:pw-1234567890@127.0.0.1:1/v1?api_key=query-key-123&model=m"
    assert url_secrets(url) == ["pw-1234567890", "query-key-123"]
    assert shown_url(url) == "http://127.0.0.1:1/v1?api_key=%5BREDACTED%5D&model=m"


def test_the_credential_of_an_auth_header_value_is_a_secret_of_its_own() -> None:
    env = {"DOCS_AUTH": "Bearer token-0123456789", "BASIC_TOKEN": "Basic dXNlcjpwYXNzLTAxMjM0NTY3", "NAMED": "x"}
    redactor = Redactor.from_environment(env, names=["DOCS_AUTH"])
    assert redactor.text("echo token-0123456789, pass-01234567") == f"echo {REDACTED}, {REDACTED}"


def test_a_long_start_or_end_of_a_key_is_redacted_anywhere() -> None:
    redactor = Redactor((KEY,))
    shortened = f"input_value='{KEY[:24]}...{KEY[-24:]}'"  # as pydantic shows a long value
    assert redactor.text(shortened) == f"input_value='{REDACTED}...{REDACTED}'"
    assert redactor.text(f"{KEY[:40]}\n(output cut at 40 characters)") == f"{REDACTED}\n(output cut at 40 characters)"
    assert redactor.text(KEY[:15] + " " + KEY[-15:]) == KEY[:15] + " " + KEY[-15:]  # too short to say
    assert redactor.found(KEY[10:30]) is False and redactor.found("x" + KEY[:16]) is True


def test_overlapping_secrets_are_redacted_together() -> None:
    # matched one after the other, the first would have left the second's end in the text
    assert Redactor(("abcdefgh12", "12345678xy")).text("<abcdefgh12345678xy>") == f"<{REDACTED}>"


def test_a_key_echoed_url_encoded_or_json_escaped_is_redacted_and_found() -> None:
    key = "sk-Ab+cd/EFghijklmnopQRSTuvwxyz0123456789ABCDEFGHIJ/k+"  # the special characters near both ends
    redactor = Redactor((key,))
    for echoed in ["sk-Ab%2Bcd%2FEFghijklmnopQRSTuvwxyz0123456789ABCDEFGHIJ%2Fk%2B",  # a query, a form body
                   "sk-Ab%2bcd%2fEFghijklmnopQRSTuvwxyz0123456789ABCDEFGHIJ%2fk%2b",  # lower-case hex digits
                   "sk-Ab+cd\\/EFghijklmnopQRSTuvwxyz0123456789ABCDEFGHIJ\\/k+"]:  # JSON with '/' escaped
        assert redactor.text(f"bad key={echoed}; retry") == f"bad key={REDACTED}; retry"
        assert redactor.found(echoed)
