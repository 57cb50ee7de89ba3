"""`toolwire web` in a real browser: headless Chromium (Debian's `chromium` and
`chromium-driver`, installed by `make setup` through .ci/chromium-setup.sh) driven over WebDriver.

The offline model calls the tools the prompt names: one needs approval, one has a hostile
description and returns hostile markup. The page must show the calls as they come, ask for the
approval, show the answer and the run's timeline, and render every piece of data as text.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from runs_helpers import running_worker, wait_finished, wait_paused
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select, WebDriverWait
from ui_helpers import ROOT

from _ports import free_port

SCREENSHOTS = "TOOLWIRE_SCREENSHOTS"
"""Set to 1 to write the screenshots into docs/images/ (by default they go to a temp dir)."""

TOOLS = '''
import anyio

from toolwire import tool


@tool(requires_approval=True)
def refund(order: int) -> str:
    """Refund an order."""
    return f"refunded order {order}"


@tool
def shout(text: str) -> str:
    """<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>Echo it loudly."""
    return '<b id="injected">bold</b><script>window.pwned=3</script>' + text.upper()


TOOLS = [refund, shout]


@tool
async def wait_a_while(seconds: int) -> str:
    """Wait some seconds."""
    await anyio.sleep(seconds)
    return "waited"


SLOW = [wait_a_while]
'''


def _binary(name: str) -> str:
    found = shutil.which(name)
    assert found is not None, f"{name} is missing: run `make setup` (.ci/chromium-setup.sh)"
    return found


@contextlib.contextmanager
def web_page(folder: Path, tools: str, *args: str) -> Iterator[str]:
    """`toolwire web` with the hostile tools module's list `tools` (and `args`) in a process on
    a free port; yields the URL it prints (token included)."""
    (folder / "hostile_tools.py").write_text(TOOLS)
    command = [sys.executable, "-m", "toolwire.cli", "web", "--model", "test"]
    proc = subprocess.Popen(
        [*command, "--tools", f"hostile_tools:{tools}", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "TOOLWIRE_TEST_MARKER": "ui-browser"},
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), proc.stderr.read() if proc.stderr else ""
        yield url
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate(timeout=30)


@pytest.fixture
def page_url(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    with web_page(tmp_path, getattr(request, "param", "TOOLS")) as url:
        yield url


@pytest.fixture(scope="session")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    """One headless Chromium per test process: a start costs a second of CPU and seconds of
    wall time, so the tests share it, each in a window of its own (`browser`)."""
    options = webdriver.ChromeOptions()
    options.binary_location = _binary("chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,800"):
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    service = Service(executable_path=_binary("chromedriver"))
    driver = webdriver.Chrome(options=options, service=service)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def browser(chromium: WebDriver) -> Iterator[WebDriver]:
    """The shared Chromium showing one new, empty window of 1280x800: nothing of an earlier
    test's pages is left (each test's servers listen on ports of their own, so their pages are
    other origins too, with their own session storage)."""
    earlier = chromium.window_handles
    chromium.switch_to.new_window("window")
    fresh = chromium.current_window_handle
    for handle in earlier:
        chromium.switch_to.window(handle)
        chromium.close()
    chromium.switch_to.window(fresh)
    chromium.set_window_size(1280, 800)
    try:
        yield chromium
    finally:
        # Leave the page (its open requests with it) before the test's servers stop.
        for handle in chromium.window_handles:
            chromium.switch_to.window(handle)
            chromium.get("about:blank")


def wait(driver: WebDriver, condition: object, timeout: float = 30) -> object:
    """Wait (bounded) until `condition(driver)` is truthy; the page updates as events arrive."""
    return WebDriverWait(driver, timeout).until(condition)  # pyright: ignore[reportArgumentType]


def test_chat_tool_calls_approval_answer_and_timeline_in_a_real_browser(
    page_url: str, browser: WebDriver, tmp_path: Path
) -> None:
    images = ROOT / "docs" / "images" if os.environ.get(SCREENSHOTS) == "1" else tmp_path
    browser.get(page_url)
    wait(browser, lambda d: d.find_element(By.ID, "model").text.startswith("model:"))
    assert "#token" not in browser.current_url  # the token leaves the address bar

    # Hostile descriptions are text: the markup shows, nothing of it runs or renders.
    browser.find_element(By.ID, "tools-summary").click()
    tools_text = browser.find_element(By.ID, "tools").text
    assert '<img src=x onerror="window.pwned=1">' in tools_text
    assert browser.find_elements(By.CSS_SELECTOR, "#tools img, #tools script") == []

    browser.find_element(By.ID, "prompt").send_keys("Refund order 7")
    browser.find_element(By.ID, "send").click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".tool .decide button.approve"))
    cards = {
        c.find_element(By.CLASS_NAME, "name").text: c
        for c in browser.find_elements(By.CLASS_NAME, "tool")
    }
    assert set(cards) == {"refund", "shout"}
    assert cards["refund"].find_element(By.CLASS_NAME, "status").text == "needs approval"
    assert '"order": 7' in cards["refund"].find_element(By.CLASS_NAME, "args").text
    assert cards["shout"].find_element(By.CLASS_NAME, "status").text == "waiting"
    images.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(images / "web-approval.png"))

    cards["refund"].find_element(By.CSS_SELECTOR, "button.approve").click()
    wait(browser, lambda d: "refunded order 7" in d.find_element(By.ID, "log").text)
    wait(browser, lambda d: "Here is what the tools found" in d.find_element(By.ID, "log").text)
    wait(browser, lambda d: not d.find_element(By.ID, "send").get_property("disabled"))

    log = browser.find_element(By.ID, "log")
    assert '<b id="injected">bold</b><script>window.pwned=3</script>' in log.text
    assert browser.find_elements(By.ID, "injected") == []
    assert browser.execute_script("return window.pwned === undefined") is True

    browser.find_element(By.ID, "tools-summary").click()  # close the tool list
    runs = browser.find_elements(By.CSS_SELECTOR, "#timeline .run")
    assert len(runs) == 2  # the run that paused, and the one the approval resumed
    labels = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#timeline .row .label")]
    assert "refund" in labels and "shout" in labels and "model #1" in labels
    details = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#timeline .detail")]
    assert any(d.endswith("· cost unknown") for d in details)  # the offline model is unpriced
    summaries = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#timeline .summary")]
    assert "stopped: completed" in summaries[0]  # the newest run comes first
    assert summaries[1] == "stopped: waiting for approval"
    assert browser.save_screenshot(str(images / "web-chat.png"))


@pytest.mark.parametrize("page_url", ["SLOW"], indirect=True)
def test_stop_ends_a_running_request_and_the_server_goes_on(
    page_url: str, browser: WebDriver
) -> None:
    browser.get(page_url)
    wait(browser, lambda d: d.find_element(By.ID, "model").text.startswith("model:"))
    browser.find_element(By.ID, "prompt").send_keys("Wait 600 seconds")
    browser.find_element(By.ID, "send").click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".tool .name"))
    assert browser.find_element(By.CSS_SELECTOR, ".tool .status").text == "calling"
    browser.find_element(By.ID, "stop").click()
    wait(browser, lambda d: "Stopped." in d.find_element(By.ID, "log").text)
    assert browser.find_element(By.ID, "send").get_property("disabled") is False

    # The server goes on serving; a page holding a wrong token is told so.
    browser.execute_script("sessionStorage.setItem('toolwire-token', 'wrong')")
    browser.refresh()
    wait(browser, lambda d: "cannot reach its server (401)" in d.find_element(By.ID, "log").text)


@pytest.fixture
def served_prebuilt(tmp_path: Path) -> Iterator[str]:
    """`toolwire serve --prebuilt` (and the hostile tools) on a free port, behind a bearer
    token; yields its MCP URL."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "TOOLWIRE_SERVE_TOKEN": SERVED_TOKEN}
    (tmp_path / "hostile_tools.py").write_text(TOOLS)
    command = [sys.executable, "-m", "toolwire.cli", "serve", "--prebuilt", "--port", "0"]
    proc = subprocess.Popen(
        [*command, "--tools", "hostile_tools:TOOLS"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()  # printed once the socket listens
        assert url.endswith("/mcp"), proc.stderr.read() if proc.stderr else ""
        yield url
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


SERVED_TOKEN = "the-served-calculator-token-0123456789"


def test_inspect_a_served_calculator_and_call_it_from_the_form(
    page_url: str, served_prebuilt: str, browser: WebDriver, tmp_path: Path
) -> None:
    images = ROOT / "docs" / "images" if os.environ.get(SCREENSHOTS) == "1" else tmp_path
    browser.get(page_url)
    wait(browser, lambda d: d.find_element(By.ID, "model").text.startswith("model:"))
    browser.find_element(By.ID, "tab-inspector").click()
    assert browser.find_element(By.ID, "chat-screen").is_displayed() is False
    browser.find_element(By.ID, "inspect-url").send_keys(served_prebuilt)
    assert not browser.find_element(By.ID, "inspect-transport").is_displayed()  # no stdio
    Select(browser.find_element(By.ID, "inspect-auth")).select_by_value("bearer")
    browser.find_element(By.ID, "inspect-token").send_keys(SERVED_TOKEN)
    browser.find_element(By.ID, "inspect-go").click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#inspect-tools button"))
    assert browser.find_element(By.ID, "inspect-status").text.startswith("Connected to")
    names = [b.text for b in browser.find_elements(By.CSS_SELECTOR, "#inspect-tools button")]
    assert "calculator" in names and "shout" in names

    # A hostile description and result are text: the markup shows, nothing of it runs.
    browser.find_element(By.CSS_SELECTOR, "#inspect-tools button[data-tool='shout']").click()
    wait(browser, lambda d: d.find_element(By.ID, "inspect-tool-name").text == "shout")
    description = browser.find_element(By.ID, "inspect-tool-description").text
    assert description.startswith('<img src=x onerror="window.pwned=1"><script>')
    browser.find_element(By.CSS_SELECTOR, "#inspect-fields input[name='text']").send_keys("hi")
    browser.find_element(By.ID, "inspect-call").click()
    wait(browser, lambda d: d.find_element(By.ID, "inspect-result").text.endswith("HI"))
    assert (
        browser.find_elements(By.CSS_SELECTOR, "#inspector-screen img, #inspector-screen b") == []
    )
    assert browser.execute_script("return window.pwned === undefined") is True

    browser.find_element(By.CSS_SELECTOR, "#inspect-tools button[data-tool='calculator']").click()
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#inspect-dialects details")) == 6)
    strict = browser.find_element(By.CSS_SELECTOR, "details[data-dialect='openai-strict']")
    assert "tokens" in strict.find_element(By.TAG_NAME, "summary").text
    strict.find_element(By.TAG_NAME, "summary").click()  # open: its schema and changes show
    assert '"additionalProperties": false' in strict.find_element(By.CLASS_NAME, "schema").text

    browser.find_element(By.CSS_SELECTOR, "#inspect-fields input[name='expression']").send_keys(
        "6*7"
    )
    browser.find_element(By.ID, "inspect-call").click()
    wait(browser, lambda d: d.find_element(By.ID, "inspect-result").text == "42")
    wire = browser.find_element(By.ID, "inspect-exchange").text
    assert "initialize" in wire or "server/discover" in wire
    assert '"method": "tools/call"' in wire and '"expression": "6*7"' in wire
    assert SERVED_TOKEN not in wire
    images.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(images / "web-inspector.png"))


def test_a_waiting_durable_run_is_approved_from_the_page(
    tmp_path: Path, browser: WebDriver
) -> None:
    images = ROOT / "docs" / "images" if os.environ.get(SCREENSHOTS) == "1" else tmp_path
    with running_worker(tmp_path) as (db, worker):
        worker.start("page-done", "charge:a")
        # The order is markup: it reaches the page as the call's arguments and result.
        worker.start("page-wait", "charge:b", "refund:<b>bold</b>")
        (call_id,) = anyio.run(wait_paused, db, "page-wait")
        anyio.run(wait_finished, db, "page-done")
        with web_page(tmp_path, "TOOLS", "--runs", db) as url:
            browser.get(url)
            wait(browser, lambda d: d.find_element(By.ID, "tab-runs").is_displayed())
            browser.find_element(By.ID, "tab-runs").click()
            row = "#runs-list button[data-run='page-wait']"
            wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, row))
            states = {
                b.get_attribute("data-run"): b.get_attribute("data-state")
                for b in browser.find_elements(By.CSS_SELECTOR, "#runs-list button")
            }
            assert states == {"page-done": "succeeded", "page-wait": "waiting (1 call)"}
            browser.find_element(By.CSS_SELECTOR, row).click()
            wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#run-pending .pending"))
            pending = browser.find_element(By.CSS_SELECTOR, "#run-pending .pending")
            assert pending.get_attribute("data-call-id") == call_id
            assert '"order": "<b>bold</b>"' in pending.text
            images.mkdir(parents=True, exist_ok=True)
            assert browser.save_screenshot(str(images / "web-runs.png"))

            pending.find_element(By.CSS_SELECTOR, "button.approve").click()
            wait(browser, lambda d: "approved refund" in d.find_element(By.ID, "run-message").text)
            # The worker runs the call and finishes; the screen follows it by itself.
            facts = (By.ID, "run-facts")
            wait(browser, lambda d: "succeeded" in d.find_element(*facts).text, timeout=60)
            conversation = browser.find_element(By.ID, "run-conversation").text
            assert "refunded <b>bold</b>" in conversation
            assert browser.find_elements(By.CSS_SELECTOR, "#runs-screen b") == []
            assert browser.find_element(By.ID, "run-approve-all").get_property("disabled")
            assert anyio.run(wait_finished, db, "page-wait").text.endswith("refunded <b>bold</b>")


def test_inspect_a_stdio_server_its_resources_templates_and_prompts(
    tmp_path: Path, browser: WebDriver
) -> None:
    images = ROOT / "docs" / "images" if os.environ.get(SCREENSHOTS) == "1" else tmp_path
    server = Path(__file__).with_name("inspected_server.py")
    paths = os.pathsep.join([str(ROOT / "src"), str(server.parent)])
    command = f"env PYTHONPATH={shlex.quote(paths)} {shlex.quote(sys.executable)} {server}"
    with web_page(tmp_path, "TOOLS", "--allow-stdio") as url:
        browser.get(url)
        wait(browser, lambda d: d.find_element(By.ID, "model").text.startswith("model:"))
        browser.find_element(By.ID, "tab-inspector").click()
        Select(browser.find_element(By.ID, "inspect-transport")).select_by_value("stdio")
        assert not browser.find_element(By.ID, "inspect-url").is_displayed()
        browser.find_element(By.ID, "inspect-command").send_keys(command)
        browser.find_element(By.ID, "inspect-go").click()
        wait(
            browser, lambda d: d.find_element(By.ID, "inspect-status").text.startswith("Connected")
        )

        def open_item(list_id: str, text: str) -> None:
            for button in browser.find_elements(By.CSS_SELECTOR, f"#{list_id} button"):
                if button.text.startswith(text):
                    button.click()
                    return
            raise AssertionError(f"no {text!r} in #{list_id}")

        def read() -> str:
            browser.find_element(By.ID, "inspect-item-go").click()
            wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#inspect-content .content"))
            return browser.find_element(By.ID, "inspect-content").text

        # Markup and script in a resource are text; nothing of them renders or runs.
        open_item("inspect-resources", "notes://hostile")
        assert '<img src=x onerror="window.pwned=4"><script>window.pwned=5</script>note' in read()
        open_item("inspect-resources", "image://dot")
        read()
        (image,) = browser.find_elements(By.CSS_SELECTOR, "#inspect-content img")
        assert (image.get_attribute("src") or "").startswith("data:image/png;base64,iVBOR")
        open_item("inspect-resources", "image://vector")  # an SVG may carry script: no image
        assert "binary image/svg+xml" in read()
        assert browser.find_elements(By.CSS_SELECTOR, "#inspect-content img") == []

        open_item("inspect-templates", "weather://{city}/now")
        browser.find_element(By.CSS_SELECTOR, "#inspect-item-fields input[name='city']").send_keys(
            "São Paulo"
        )
        assert "Weather in São Paulo: sunny <b>São Paulo</b>" in read()

        open_item("inspect-prompts", "review(")
        fields = "#inspect-item-fields input[name='{}']"
        browser.find_element(By.CSS_SELECTOR, fields.format("code")).send_keys("x = 1")
        browser.find_element(By.CSS_SELECTOR, fields.format("style")).send_keys("<i>long</i>")
        browser.find_element(By.ID, "inspect-item-go").click()
        wait(browser, lambda d: "x = 1" in d.find_element(By.ID, "inspect-content").text)
        prompt = browser.find_element(By.ID, "inspect-content").text
        assert "Review (<i>long</i>): <script>window.pwned=6</script>x = 1" in prompt
        assert (
            browser.find_elements(By.CSS_SELECTOR, "#inspector-screen i, #inspector-screen b") == []
        )
        assert browser.execute_script("return window.pwned === undefined") is True
        wire = browser.find_element(By.ID, "inspect-exchange").text
        assert "stdio" in wire and '"method": "prompts/get"' in wire
        images.mkdir(parents=True, exist_ok=True)
        assert browser.save_screenshot(str(images / "web-inspector-prompt.png"))


@pytest.fixture
def signed_in_server(tmp_path: Path) -> Iterator[str]:
    """inspected_server.py's authorization server and the MCP server behind it, in a process;
    yields the MCP URL."""
    server = Path(__file__).with_name("inspected_server.py")
    ports = [str(free_port()), str(free_port())]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(server.parent)])}
    proc = subprocess.Popen(
        [sys.executable, str(server), "oauth", *ports],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()  # printed once both servers listen
        assert url.endswith("/mcp"), proc.stderr.read() if proc.stderr else ""
        yield url
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_sign_in_to_a_server_in_a_browser_tab(
    page_url: str, signed_in_server: str, browser: WebDriver
) -> None:
    browser.get(page_url)
    wait(browser, lambda d: d.find_element(By.ID, "model").text.startswith("model:"))
    browser.find_element(By.ID, "tab-inspector").click()
    browser.find_element(By.ID, "inspect-url").send_keys(signed_in_server)
    Select(browser.find_element(By.ID, "inspect-auth")).select_by_value("oauth")
    browser.find_element(By.ID, "inspect-go").click()
    # The page shows the authorization server's address while the connect waits.
    wait(browser, lambda d: d.find_element(By.ID, "inspect-signin-link").is_displayed())
    link = browser.find_element(By.ID, "inspect-signin-link")
    assert (link.get_attribute("href") or "").startswith("http://127.0.0.1:")
    assert link.get_attribute("rel") == "noopener noreferrer"
    page = browser.current_window_handle
    link.click()  # a new tab: the server consents at once and redirects back to toolwire
    wait(browser, lambda d: len(d.window_handles) == 2)
    browser.switch_to.window(next(h for h in browser.window_handles if h != page))
    wait(browser, lambda d: "Signed in" in d.find_element(By.TAG_NAME, "body").text)
    browser.close()
    browser.switch_to.window(page)
    wait(browser, lambda d: d.find_element(By.ID, "inspect-status").text.startswith("Connected"))
    assert "signed" in browser.find_element(By.ID, "inspect-status").text
    assert not browser.find_element(By.ID, "inspect-signin").is_displayed()
