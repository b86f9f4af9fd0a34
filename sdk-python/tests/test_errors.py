"""Error answers as typed errors, and Retry-After read both ways."""

from __future__ import annotations

import email.utils
import unittest

from ductor import APIError, Client, TransportError, is_status
from ductor.errors import parse_retry_after, retryable

from stub import Stub


class ErrorsTest(unittest.TestCase):
    def test_retry_after(self) -> None:
        self.assertEqual(parse_retry_after("3"), 3.0)
        self.assertEqual(parse_retry_after("0.5"), 0.5)
        self.assertIsNone(parse_retry_after(None))
        self.assertIsNone(parse_retry_after("soon"))
        at = email.utils.formatdate(1_000_030, usegmt=True)
        self.assertAlmostEqual(parse_retry_after(at, now=1_000_000), 30.0)
        self.assertEqual(parse_retry_after(at, now=2_000_000), 0.0)

    def test_retryable(self) -> None:
        self.assertTrue(retryable(APIError(429, "rate_limited", "")))
        self.assertTrue(retryable(APIError(503, "unavailable", "")))
        self.assertFalse(retryable(APIError(409, "conflict", "")))
        self.assertTrue(retryable(TransportError("refused")))
        self.assertFalse(retryable(ValueError("bug")))

    def test_an_error_answer_is_an_api_error(self) -> None:
        stub = Stub()
        self.addCleanup(stub.close)
        stub.heartbeat = (409, {"error": {"code": "conflict", "message": "lease lost", "details": {"a": 1}}},
                          {"Retry-After": "2"})
        c = Client(stub.url, "dk_test")
        with self.assertRaises(APIError) as e:
            c._call("POST", "/tasks/x/heartbeat", {"token": "t"})
        err = e.exception
        self.assertEqual((err.status, err.code, err.message, err.details, err.retry_after),
                         (409, "conflict", "lease lost", {"a": 1}, 2.0))
        self.assertTrue(is_status(err, 409))
        self.assertEqual(str(err), "ductor: 409 conflict: lease lost")
        stub.heartbeat = (502, "bad gateway", {})
        with self.assertRaises(APIError) as e:
            c._call("POST", "/tasks/x/heartbeat", {})
        self.assertEqual((e.exception.status, e.exception.code), (502, "http_502"))

    def test_an_unreachable_server_is_a_transport_error(self) -> None:
        stub = Stub()
        url = stub.url
        stub.close()
        with self.assertRaises(TransportError):
            Client(url, "dk_test").whoami()

    def test_the_client_checks_its_arguments(self) -> None:
        for url, key in [("127.0.0.1:8080", "dk_x"), ("ftp://h", "dk_x"), ("http://h", ""), ("http://h", "secret")]:
            with self.assertRaises(ValueError, msg=(url, key)):
                Client(url, key)
        Client("", "dk_x")


if __name__ == "__main__":
    unittest.main()
