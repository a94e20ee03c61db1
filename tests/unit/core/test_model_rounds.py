"""What each model round was offered, asked for and ran; a tool asked for that was not offered is named
(001_…, Context: "Tools the model could not see")."""

from __future__ import annotations

from core.model_rounds import ModelRound, model_rounds, round_of_steps
from tests.unit.core.events_helpers import approval, llm, refused, request, segments, tool, tool_write

SEO = ("get_page_seo", "update_page_seo")


def test_a_round_is_offered_the_tools_of_the_request_right_before_it() -> None:
    parts = segments(request(SEO), llm(["get_page_seo"]), tool("get_page_seo"), request(("get_page",)), llm())

    rounds = model_rounds(parts)

    assert [r.offered for r in rounds] == [SEO, ("get_page",)]
    assert [r.requested for r in rounds] == [("get_page_seo",), ()]
    assert [r.ran for r in rounds] == [("get_page_seo",), ()]


def test_a_tool_asked_for_that_the_round_did_not_offer_is_named_once() -> None:
    parts = segments(request(SEO), llm(["translate_page", "get_page_seo", "translate_page"]), refused("x"))

    (only,) = model_rounds(parts)

    assert only.not_offered == ("translate_page",)
    assert only.refused == ("x",) and only.ran == ()


def test_without_a_request_naming_the_offer_nothing_is_marked_not_offered() -> None:
    parts = segments(llm(["translate_page"]), tool("translate_page"))

    (only,) = model_rounds(parts)

    assert only.offered is None and only.not_offered == ()


def test_an_offer_is_used_by_one_round_only() -> None:
    parts = segments(request(SEO), llm(["get_page_seo"]), tool("get_page_seo"), llm(["update_page_seo"]))

    rounds = model_rounds(parts)

    assert [r.offered for r in rounds] == [SEO, None]


def test_a_call_that_waited_for_a_decision_ran_for_the_round_that_asked_for_it() -> None:
    parts = segments(
        request(SEO),
        llm(["update_page_seo"]),
        approval(True),
        tool("update_page_seo"),
        tool_write("pages", 7),
        request(SEO),
        llm(),
    )

    rounds = model_rounds(parts)

    assert rounds == (
        ModelRound(0, 1, SEO, ("update_page_seo",), ran=("update_page_seo",)),
        ModelRound(1, 2, SEO, ()),
    )


def test_tool_steps_before_the_first_round_belong_to_no_round() -> None:
    parts = segments(tool("get_page"), request(SEO), llm())

    (only,) = model_rounds(parts)

    assert only.ran == () and only.segment == 0


def test_a_call_that_waited_for_a_decision_belongs_to_the_round_of_the_segment_that_asked_for_it() -> None:
    parts = segments(
        llm(["update_page_seo"]), approval(True), tool("update_page_seo"), tool_write("pages", 1), llm()
    )

    rounds = model_rounds(parts)
    asked = round_of_steps(rounds)

    (called,) = parts[1].tool_steps
    assert (asked[called.uid].segment, asked[called.uid].round) == (0, rounds[0].round)
    assert rounds[0].steps == (called.uid,) and rounds[1].steps == ()
