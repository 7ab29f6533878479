"""A NetBox that misbehaves (planner/dcim/client.py): a fake NetBox on 127.0.0.1 serves
each bad answer a real server or a hostile one can give, and `planner import netbox --url` must
answer exit 2 with a sentence naming the URL and what was expected, in bounded time, nothing
written; a second server on another port, named by a `next` link or a redirect, must never see a
request (and so never the token). The CSV side: encodings, cells, columns and overlays a user's
files can hold."""

from __future__ import annotations

import csv
import json
import shutil
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from planner.cli import main
from planner.dcim.client import NetBox
from planner.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "0123456789abcdef0123456789abcdef01234567"
SITES = "/api/dcim/sites/?limit=1000"


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *a) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self.server.seen.append((self.path, self.headers.get("Authorization")))  # type: ignore[attr-defined]
        route = self.server.routes.get(self.path)  # type: ignore[attr-defined]
        if route is None:
            self.send_json({"count": 0, "next": None, "results": []})
        else:
            route(self)

    def send_json(self, obj: object, status: int = 200) -> None:
        self.send_raw(json.dumps(obj).encode(), status)

    def send_raw(self, body: bytes, status: int = 200, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        self.wfile.write(body)


class Fake:
    """A NetBox stand-in: ``routes`` maps a request path to a function of the handler; ``seen``
    lists (path, Authorization) of every request."""

    def __init__(self) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.routes = {}  # type: ignore[attr-defined]
        self.httpd.seen = []  # type: ignore[attr-defined]
        self.stop = threading.Event()
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def routes(self) -> dict:
        return self.httpd.routes  # type: ignore[attr-defined]

    @property
    def seen(self) -> list:
        return self.httpd.seen  # type: ignore[attr-defined]

    def close(self) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def servers():
    a, b = Fake(), Fake()
    yield a, b
    a.close()
    b.close()


def _import(url: str, tmp_path: Path, monkeypatch, *extra: str) -> int:
    monkeypatch.setenv("NETBOX_TOKEN", TOKEN)
    return main(["import", "netbox", "--url", url, "-o", str(tmp_path / "site.yaml"), *extra])


def _refused(servers, tmp_path, monkeypatch, capsys, *extra: str) -> str:
    """Run the import against the first server: exit 2, nothing written, the second server never
    asked; the error text."""
    a, b = servers
    assert _import(a.url, tmp_path, monkeypatch, *extra) == 2
    assert not (tmp_path / "site.yaml").exists()
    assert b.seen == []
    return capsys.readouterr().err


def test_an_answer_that_is_not_json_is_named_with_its_url(servers, tmp_path, monkeypatch, capsys) -> None:
    a, _ = servers
    a.routes[SITES] = lambda h: h.send_raw(b"<html>Welcome</html>")
    err = _refused(servers, tmp_path, monkeypatch, capsys)
    assert (
        f"NetBox at {a.url}: the answer to GET {a.url}{SITES} is not JSON (HTTP 200, starts "
        "'<html>Welcome</html>'); is --url the NetBox address?"
    ) in err


@pytest.mark.parametrize(
    ("answer", "got"),
    [([], "got list"), ({"count": 3}, "got keys ['count']"), ({"results": {"a": 1}}, "got keys ['results']")],
)
def test_a_page_without_a_results_list_is_refused(
    servers, tmp_path, monkeypatch, capsys, answer, got
) -> None:
    a, _ = servers
    a.routes[SITES] = lambda h: h.send_json(answer)
    err = _refused(servers, tmp_path, monkeypatch, capsys)
    assert (
        f"NetBox at {a.url}: the answer to GET {a.url}{SITES} is no list page "
        f"(expected an object with 'results', {got})"
    ) in err


def test_results_that_are_not_objects_are_refused(servers, tmp_path, monkeypatch, capsys) -> None:
    a, _ = servers
    a.routes[SITES] = lambda h: h.send_json({"next": None, "results": [1, 2]})
    err = _refused(servers, tmp_path, monkeypatch, capsys)
    assert f"the answer to GET {a.url}{SITES}: 'results' holds int, expected objects" in err


def test_a_next_link_to_the_same_page_is_refused(servers, tmp_path, monkeypatch, capsys) -> None:
    a, _ = servers
    a.routes[SITES] = lambda h: h.send_json({"next": f"{a.url}{SITES}", "results": []})
    err = _refused(servers, tmp_path, monkeypatch, capsys)
    assert f"NetBox at {a.url}: page {a.url}{SITES} came back as its own next page; refused" in err
    assert len(a.seen) == 1


def test_a_next_link_to_another_port_never_gets_the_token(servers, tmp_path, monkeypatch, capsys) -> None:
    a, b = servers
    a.routes[SITES] = lambda h: h.send_json({"next": f"{b.url}{SITES}&offset=1000", "results": []})
    err = _refused(servers, tmp_path, monkeypatch, capsys)
    assert (
        f"NetBox at {a.url}: a next link '{b.url}{SITES}&offset=1000' points outside {a.url}; not "
        "followed (the API token is sent to the configured address only)"
    ) in err
    assert a.seen == [(SITES, f"Token {TOKEN}")]


def test_a_redirect_to_another_port_is_not_followed(servers, tmp_path, monkeypatch, capsys) -> None:
    a, b = servers

    def away(h) -> None:
        h.send_response(302)
        h.send_header("Location", f"{b.url}/steal")
        h.send_header("Content-Length", "0")
        h.end_headers()

    a.routes[SITES] = away
    err = _refused(servers, tmp_path, monkeypatch, capsys)
    assert (
        f"NetBox at {a.url}: a redirect (HTTP 302) to '{b.url}/steal' points outside {a.url}; not followed"
        in err
    )


def test_a_redirect_within_the_origin_is_followed(servers) -> None:
    a, _ = servers

    def moved(h) -> None:
        h.send_response(301)
        h.send_header("Location", "/api/dcim/sites/?limit=1000&moved=1")
        h.send_header("Content-Length", "0")
        h.end_headers()

    a.routes[SITES] = moved
    a.routes[SITES + "&moved=1"] = lambda h: h.send_json({"next": None, "results": [{"name": "DAL1"}]})
    assert list(NetBox(a.url, TOKEN).all("/api/dcim/sites/")) == [{"name": "DAL1"}]
    assert [auth for _, auth in a.seen] == [f"Token {TOKEN}"] * 2


def test_a_silent_server_is_cut_off_at_the_timeout(servers, tmp_path, monkeypatch, capsys) -> None:
    a, _ = servers
    a.routes[SITES] = lambda h: a.stop.wait(60)
    t0 = time.perf_counter()
    err = _refused(servers, tmp_path, monkeypatch, capsys, "--timeout", "1")
    assert time.perf_counter() - t0 < 25  # the server would hold on for 60 s or more
    assert f"NetBox at {a.url}: no whole answer to GET {a.url}{SITES} within 1 s" in err


def test_a_server_sending_a_byte_a_second_is_cut_off(servers, tmp_path, monkeypatch, capsys) -> None:
    a, _ = servers

    def drip(h) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "200")
        h.end_headers()
        for _ in range(200):
            if a.stop.wait(0.5):
                return
            try:
                h.wfile.write(b" ")
                h.wfile.flush()
            except OSError:
                return

    a.routes[SITES] = drip
    t0 = time.perf_counter()
    err = _refused(servers, tmp_path, monkeypatch, capsys, "--timeout", "2")
    assert time.perf_counter() - t0 < 25  # the server would hold on for 60 s or more
    assert f"NetBox at {a.url}: no whole answer to GET {a.url}{SITES} within 2 s" in err


def test_the_import_deadline_bounds_every_answer(servers, tmp_path, monkeypatch, capsys) -> None:
    a, _ = servers
    a.routes[SITES] = lambda h: a.stop.wait(60)
    err = _refused(servers, tmp_path, monkeypatch, capsys, "--deadline", "1")
    assert f"no whole answer to GET {a.url}{SITES} within 1 s" in err


def test_an_answer_announced_beyond_the_cap_is_refused_unread(servers, tmp_path, monkeypatch, capsys) -> None:
    a, _ = servers
    a.routes[SITES] = lambda h: h.send_raw(b"[", length=600 * 2**20)
    err = _refused(servers, tmp_path, monkeypatch, capsys, "--timeout", "5")
    assert f"NetBox at {a.url}: the answer to GET {a.url}{SITES} passes 268,435,456 bytes; refused" in err


def test_an_endless_answer_is_refused_at_the_cap(servers) -> None:
    """No Content-Length, bytes without end: refused as soon as the cap is passed."""
    a, _ = servers

    def endless(h) -> None:
        h.send_response(200)
        h.end_headers()
        while not a.stop.is_set():
            try:
                h.wfile.write(b"x" * 65536)
            except OSError:
                return

    a.routes[SITES] = endless
    nb = NetBox(a.url, TOKEN, timeout_s=20, max_answer_bytes=10**6)
    with pytest.raises(InputError) as e:
        list(nb.all("/api/dcim/sites/"))
    assert e.value.lines() == [
        f"NetBox at {a.url}: the answer to GET {a.url}{SITES} passes 1,000,000 bytes; refused"
    ]


def test_the_answers_together_are_capped(servers) -> None:
    a, _ = servers
    page = {"results": [{"name": "x" * 400}], "next": None}
    a.routes[SITES] = lambda h: h.send_json(page)
    nb = NetBox(a.url, TOKEN, max_total_bytes=800)
    list(nb.all("/api/dcim/sites/"))
    with pytest.raises(InputError) as e:
        list(nb.all("/api/dcim/sites/"))
    assert e.value.lines() == [
        f"NetBox at {a.url}: the answers pass 800 bytes in all (at GET {a.url}{SITES}); refused"
    ]


def test_a_refusal_carries_netboxs_words(servers, tmp_path, monkeypatch, capsys) -> None:
    a, _ = servers
    a.routes[SITES] = lambda h: h.send_json({"detail": "Invalid token"}, status=403)
    err = _refused(servers, tmp_path, monkeypatch, capsys)
    assert f'NetBox refused GET {a.url}{SITES} (HTTP 403): {{"detail": "Invalid token"}}' in err


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("ftp://127.0.0.1/", "--url: 'ftp://127.0.0.1/' is no http:// or https:// address of a NetBox"),
        ("127.0.0.1:8000", "--url: '127.0.0.1:8000' is no http:// or https:// address of a NetBox"),
        ("http://127.0.0.1:99999", "--url: 'http://127.0.0.1:99999' has no valid port"),
    ],
)
def test_a_url_that_names_no_netbox_is_refused(url, said, tmp_path, monkeypatch, capsys) -> None:
    assert _import(url, tmp_path, monkeypatch) == 2
    assert said in capsys.readouterr().err


def test_a_closed_port_is_named(tmp_path, monkeypatch, capsys) -> None:
    assert _import("http://127.0.0.1:9", tmp_path, monkeypatch, "--timeout", "5") == 2
    assert (
        "NetBox at http://127.0.0.1:9 cannot be reached: [Errno 111] Connection refused"
        in capsys.readouterr().err
    )


# --- CSV folders -----------------------------------------------------------------------------

RACKS = "name,site,location,cf_planner_row,cf_planner_position,cf_planner_x_m,cf_planner_y_m\n"


def _folder(tmp_path: Path, racks: str, locations: str = "name,site,parent\nH1,DAL1,\n") -> Path:
    d = tmp_path / "nb"
    d.mkdir()
    (d / "locations.csv").write_text(locations, encoding="utf-8")
    (d / "racks.csv").write_text(racks, encoding="utf-8")
    return d


def _csv_import(d: Path, tmp_path: Path, *extra: str) -> int:
    return main(["import", "netbox", "--csv", str(d), "-o", str(tmp_path / "site.yaml"), *extra])


def test_a_utf16_csv_is_refused_with_its_encoding(tmp_path, capsys) -> None:
    d = _folder(tmp_path, RACKS)
    (d / "racks.csv").write_text(RACKS + "R1-0,DAL1,H1,R1,0,0,0\n", encoding="utf-16")
    assert _csv_import(d, tmp_path) == 2
    assert (
        "--csv racks.csv: the file is UTF-16; NetBox's CSV import and export use UTF-8: save it as UTF-8 "
        "(CSV UTF-8 in a spreadsheet)"
    ) in capsys.readouterr().err


def test_a_latin1_csv_is_refused_with_the_byte(tmp_path, capsys) -> None:
    d = _folder(tmp_path, RACKS)
    (d / "racks.csv").write_bytes((RACKS + "Salle-é,DAL1,H1,R1,0,0,0\n").encode("latin-1"))
    assert _csv_import(d, tmp_path) == 2
    assert (
        f"--csv racks.csv: not UTF-8 (byte 0xe9 at offset {len(RACKS) + 6}; Latin-1 or a Windows code "
        "page?); NetBox's CSV import and export use UTF-8: save it as UTF-8"
    ) in capsys.readouterr().err


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    """small-hall's plan exported as a NetBox bundle (CSVs in import columns, overlay.yaml)."""
    from planner.input.loader import load_scenario
    from planner.plan import save_plan
    from planner.plan.pipeline import plan_scenario

    root = tmp_path_factory.mktemp("bundle")
    scenario = ROOT / "datasets" / "small-hall.yaml"
    save_plan(plan_scenario(load_scenario(scenario)), root / "p.plan.yaml")
    assert (
        main(
            ["export", str(root / "p.plan.yaml"), str(scenario), "--format", "netbox", "-o", str(root / "b")]
        )
        == 0
    )
    return root / "b"


def _edited(bundle: Path, tmp_path: Path, edit) -> Path:
    """A copy of the bundle with its racks CSV's rows passed through ``edit``."""
    d = tmp_path / "b"
    shutil.copytree(bundle, d)
    f = next(d.glob("*-racks.csv"))
    with f.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    edit(rows)
    with f.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return d


def _bundle_import(d: Path, tmp_path: Path) -> int:
    return _csv_import(d, tmp_path, "--overlay", str(d / "overlay.yaml"))


def test_a_utf8_csv_with_a_byte_order_mark_reads(bundle, tmp_path, capsys) -> None:
    d = _edited(bundle, tmp_path, lambda rows: None)
    for f in d.glob("*.csv"):
        f.write_text(f.read_text(encoding="utf-8"), encoding="utf-8-sig")
    assert _bundle_import(d, tmp_path) == 0
    plain = tmp_path / "plain.yaml"
    assert (
        main(
            [
                "import",
                "netbox",
                "--csv",
                str(bundle),
                "--overlay",
                str(bundle / "overlay.yaml"),
                "-o",
                str(plain),
            ]
        )
        == 0
    )
    assert (tmp_path / "site.yaml").read_text() == plain.read_text()


@pytest.mark.parametrize("pos", ["abc", "-1", "2.5", "1e9", "nan"])
def test_a_bad_rack_position_is_listed_not_guessed(pos, bundle, tmp_path, capsys) -> None:
    def edit(rows: list[dict]) -> None:
        rows.append({**rows[-1], "name": "stray", "cf_planner_position": pos})

    d = _edited(bundle, tmp_path, edit)
    assert _bundle_import(d, tmp_path) == 0
    out = capsys.readouterr().out
    assert (
        f"unmapped: rack 'stray': planner_position '{pos}' is no position index (a whole number 0..9,999)"
        in out
    )


def _overlay(tmp_path: Path, text: str = "halls: {H1: {floor_area_m2: 100}}\n") -> Path:
    p = tmp_path / "overlay.yaml"
    p.write_text(text)
    return p


def test_an_oversized_cell_is_refused_with_its_line(tmp_path, capsys) -> None:
    d = _folder(tmp_path, RACKS + "R1-0,DAL1,H1,R1,0,0,0\n" + "x" * 200_000 + ",DAL1,H1,R1,1,0,0\n")
    assert _csv_import(d, tmp_path) == 2
    assert "--csv racks.csv: line 3: field larger than field limit (131072)" in capsys.readouterr().err


def test_a_racks_file_without_a_name_column_is_refused(tmp_path, capsys) -> None:
    d = _folder(tmp_path, "site,location\nDAL1,H1\n")
    assert _csv_import(d, tmp_path) == 2
    assert (
        "--csv racks.csv: no 'name' column (the columns of NetBox's racks import form; this file has "
        "site, location)"
    ) in capsys.readouterr().err


def test_a_rack_with_an_empty_name_is_refused(tmp_path, capsys) -> None:
    d = _folder(tmp_path, RACKS + ",DAL1,H1,R1,0,0,0\n")
    assert _csv_import(d, tmp_path) == 2
    assert "racks[0]: no 'name' (every rack names name)" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("rows: [R1]\n", "--overlay rows: expected a mapping of IDs to fields, got list"),
        ("halls: {H1: 5}\n", "--overlay halls.H1: expected a mapping of fields, got int"),
        ("site: [a]\n", "--overlay site: expected a mapping of site fields, got list"),
        ("site: {fabric: 3}\n", "--overlay site.fabric: expected a mapping, got int"),
        (
            "halls: {H1: {floor_area_m2: 100}}\nsite: {fabric: {tray_allowance_m: wide}}\n",
            "--overlay site.fabric.tray_allowance_m: 'wide' is not a number",
        ),
        (
            "halls: {H1: {floor_area_m2: 100}}\nrows: {R1: {direction: up}}\n",
            "row 'R1': its geometry (from NetBox or the --overlay rows) is not numbers and a direction",
        ),
    ],
)
def test_a_malformed_overlay_is_refused(text, said, tmp_path, capsys) -> None:
    racks = RACKS + "R1-0,DAL1,H1,R1,0,0,0\nR1-1,DAL1,H1,R1,1,0.6,0\n"
    d = _folder(tmp_path, racks)
    (d / "devices.csv").write_text(
        "name,status,rack,cf_planner_rack_type\nD1,active,R1-0,gb200\n", encoding="utf-8"
    )
    assert _csv_import(d, tmp_path, "--overlay", str(_overlay(tmp_path, text))) == 2
    assert said in capsys.readouterr().err


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        (
            "voltage",
            "0",
            "voltage 0 is outside 0 < voltage ≤ 100,000; NetBox keeps it in volts "
            + "(415 for a 415 V three-phase feed)",
        ),
        ("amperage", "-32", "amperage -32 is outside 0 < amperage ≤ 100,000; NetBox keeps it in amperes"),
        (
            "max_utilization",
            "800",
            "max_utilization 800 is outside 0 < max_utilization ≤ 100; NetBox keeps it in percent "
            + "(80 for 80 %)",
        ),
    ],
)
def test_a_feed_outside_electrical_ranges_is_refused_with_its_unit(
    key, value, said, bundle, tmp_path, capsys
) -> None:
    d = tmp_path / "b"
    shutil.copytree(bundle, d)
    f = next(d.glob("*-power-feeds.csv"))
    with f.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    rows[0][key] = value
    with f.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    assert _bundle_import(d, tmp_path) == 2
    assert f"power feed '{rows[0]['name']}': {said}" in capsys.readouterr().err
