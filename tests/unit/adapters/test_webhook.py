"""The webhook POST (adapters.webhook) against endpoints on 127.0.0.1: delivered on a 2xx, tried again a
bounded number of times after a server error, a timeout or a refused connection, never after a 4xx."""

from __future__ import annotations

import pytest

from adapters.webhook import Policy, location, post_json
from tests.webhook_receiver import closed_port_url, receiver, silent_endpoint

FAST = Policy(timeout_s=0.3, attempts=3, backoff_s=0.01)
DOCUMENT = {"id": 7, "metric": "edited_rate", "text": "Seitentitel geändert → 60.0%"}


class Pauses:
    """A sleep that records the pauses asked for instead of sleeping."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)


def test_a_document_is_posted_once_as_json_and_a_2xx_delivers_it() -> None:
    with receiver(204) as endpoint:
        delivery = post_json(endpoint.url, DOCUMENT, FAST)

    assert (delivery.delivered, delivery.attempts, delivery.reason) == (True, 1, "")
    assert endpoint.bodies == [DOCUMENT]
    assert endpoint.posts[0]["headers"]["Content-Type"] == "application/json; charset=utf-8"
    assert endpoint.posts[0]["path"] == "/hooks/runrecord?token=secret"


def test_a_server_error_is_tried_again_with_pauses_that_double_until_the_tries_are_spent() -> None:
    pauses = Pauses()

    with receiver(500) as endpoint:
        delivery = post_json(
            endpoint.url, DOCUMENT, Policy(timeout_s=0.3, attempts=3, backoff_s=1.0), sleep=pauses
        )

    assert (delivery.delivered, delivery.attempts, delivery.reason) == (False, 3, "HTTP 500")
    assert len(endpoint.posts) == 3
    assert pauses.asked == [1.0, 2.0]


def test_a_server_error_then_a_2xx_is_delivered_on_the_second_try() -> None:
    with receiver(503, 200) as endpoint:
        delivery = post_json(endpoint.url, DOCUMENT, FAST)

    assert (delivery.delivered, delivery.attempts) == (True, 2)
    assert endpoint.bodies == [DOCUMENT, DOCUMENT]


@pytest.mark.parametrize("status", [400, 404, 410])
def test_a_client_error_is_not_tried_again(status: int) -> None:
    with receiver(status) as endpoint:
        delivery = post_json(endpoint.url, DOCUMENT, FAST)

    assert (delivery.delivered, delivery.attempts, delivery.reason) == (False, 1, f"HTTP {status}")
    assert len(endpoint.posts) == 1


def test_a_server_that_does_not_answer_times_out_on_every_try() -> None:
    pauses = Pauses()

    with silent_endpoint() as url:
        delivery = post_json(url, DOCUMENT, FAST, sleep=pauses)

    assert (delivery.delivered, delivery.attempts, delivery.reason) == (False, 3, "timed out after 0.3 s")
    assert len(pauses.asked) == 2


def test_a_refused_connection_is_tried_again_and_named() -> None:
    delivery = post_json(closed_port_url(), DOCUMENT, FAST, sleep=Pauses())

    assert (delivery.delivered, delivery.attempts) == (False, 3)
    assert "refused" in delivery.reason


def test_the_webhook_is_named_by_scheme_and_host_only_never_its_path_or_token() -> None:
    assert location("https://hooks.example.org/services/T0/B1/secret?token=x") == "https://hooks.example.org"
    assert location("http://127.0.0.1:8080/hook") == "http://127.0.0.1:8080"


def test_a_user_and_password_in_the_url_are_sent_as_basic_credentials_not_as_part_of_the_host() -> None:
    with receiver(200, path="/hook") as endpoint:
        with_user = endpoint.url.replace("http://", "http://alerts:p%40ss%3Aword@")
        delivery = post_json(with_user, DOCUMENT, FAST)

    assert delivery.delivered, delivery.reason
    assert endpoint.posts[0]["headers"]["Authorization"] == "Basic YWxlcnRzOnBAc3M6d29yZA=="
    assert endpoint.posts[0]["path"] == "/hook"
    assert location(with_user) == endpoint.url.removesuffix("/hook")
