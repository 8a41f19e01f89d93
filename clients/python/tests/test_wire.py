"""What the client refuses to send, and where it sends the rest. No I/O."""

import unittest

from writegateway import Gateway
from writegateway.wire import (BaseUrl, encode_body, label, mutation_method, provider_path,
                               proxy_target, task_target, token)


class Labels(unittest.TestCase):
    def test_labels_are_1_to_80_visible_ascii(self):
        self.assertEqual(label("task", "trip-42/a?b"), "trip-42/a?b")
        self.assertEqual(label("task", "x" * 80), "x" * 80)
        for bad in ("", "x" * 81, "a b", "tab\t", "é", "line\n"):
            with self.assertRaises(ValueError, msg=repr(bad)):
                label("task", bad)
        with self.assertRaises(TypeError):
            label("task", 42)

    def test_tokens_cannot_smuggle_headers(self):
        for bad in ("", "a b", "tok\r\nX-Evil: 1"):
            with self.assertRaises(ValueError, msg=repr(bad)):
                token("token", bad)


class Targets(unittest.TestCase):
    def test_every_target_is_a_path_under_the_base(self):
        base = BaseUrl.parse("https://gw.example:8443/edge/")
        self.assertEqual((base.scheme, base.host, base.port, base.path),
                         ("https", "gw.example", 8443, "/edge"))
        self.assertEqual(task_target(base, "tenant-a", "trip/1?", "claim"),
                         "/edge/v1/tenants/tenant-a/tasks/trip%2F1%3F/claim")
        self.assertEqual(proxy_target(base, "t", "k", "booking", "/bookings?x=1"),
                         "/edge/v1/tenants/t/tasks/k/providers/booking/bookings?x=1")

    def test_a_provider_path_cannot_name_another_host(self):
        for bad in ("bookings", "//evil.example/x", "http://evil.example/", "/a b", "/a#frag",
                    "/\u00e9", "/a\r\nHost: evil"):
            with self.assertRaises(ValueError, msg=repr(bad)):
                provider_path(bad)

    def test_base_urls(self):
        self.assertEqual(str(BaseUrl.parse("http://127.0.0.1:8080")), "http://127.0.0.1:8080")
        self.assertEqual(BaseUrl.parse("http://gw").port, 80)
        self.assertEqual(BaseUrl.parse("https://gw").port, 443)
        for bad in ("ftp://gw", "gw:8080", "http://", "http://user:pw@gw", "http://gw/?q=1",
                    "http://gw/#f", "http://gw:99999", "http://gw/a b"):
            with self.assertRaises(ValueError, msg=bad):
                BaseUrl.parse(bad)

    def test_the_token_is_not_in_the_handle_s_repr(self):
        gateway = Gateway("http://127.0.0.1:1", "secret-agent-token")
        self.assertNotIn("secret-agent-token", repr(gateway))


class Methods(unittest.TestCase):
    def test_only_methods_the_gateway_fences(self):
        for method in ("POST", "PUT", "PATCH", "DELETE", "PURGE"):
            self.assertEqual(mutation_method(method), method)
        for method in ("GET", "head", "TRACE", "CONNECT", "OPTIONS"):
            with self.assertRaises(ValueError, msg=method):
                mutation_method(method)
        for method in ("", "PO ST", "POST\r\n"):
            with self.assertRaises(ValueError, msg=repr(method)):
                mutation_method(method)


class Bodies(unittest.TestCase):
    def test_the_same_json_value_is_always_the_same_bytes(self):
        one = encode_body({"slot": "09:00", "customer": "ada"}, None)
        two = encode_body({"customer": "ada", "slot": "09:00"}, None)
        self.assertEqual(one, two)
        self.assertEqual(one, (b'{"customer":"ada","slot":"09:00"}', "application/json"))

    def test_bytes_and_text_go_as_given(self):
        self.assertEqual(encode_body(b"\x00raw", "application/octet-stream"),
                         (b"\x00raw", "application/octet-stream"))
        self.assertEqual(encode_body("h\u00e9", None),
                         ("h\u00e9".encode(), "text/plain; charset=utf-8"))
        self.assertEqual(encode_body(None, None), (b"", None))

    def test_what_is_not_json_is_refused(self):
        for bad in ({"x": float("nan")}, {"x": object()}, {1j}):
            with self.assertRaises(TypeError, msg=repr(bad)):
                encode_body(bad, None)


class Arguments(unittest.TestCase):
    def test_bad_gateway_arguments_are_refused_before_any_request(self):
        for kwargs in ({"timeout": 0}, {"timeout": -1}, {"outcome_wait": -1},
                       {"retry": "fast"}):
            with self.assertRaises((ValueError, TypeError), msg=kwargs):
                Gateway("http://127.0.0.1:1", "tok", **kwargs)
        with self.assertRaises(ValueError):
            Gateway("http://127.0.0.1:1", "tok", ssl_context=object())


if __name__ == "__main__":
    unittest.main()
