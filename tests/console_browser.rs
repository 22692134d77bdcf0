//! The console in a real browser: Debian's Chromium driven through
//! chromedriver (WebDriver, `fantoccini`) against `matchplane dev`. Opens
//! the landing page (`/console/`) and from there only clicks, as a person
//! would: signs in with an API key, creates a game mode with an error then
//! fixes it, follows the modes list's links, watches the live pool fill
//! from searches this test starts and a match appear, opens its deliveries
//! and redelivers, sees the mode's webhook fail, reads the charts' lines,
//! declares a mode's attributes and rules in their fields (a rule on an
//! undeclared attribute refused beside that rule's field, the JSON view
//! holding the same document) and watches its Rules section count the
//! searches its rule keeps apart, runs a simulation with an uploaded
//! arrivals CSV and one comparing two configs (each side's figures, the
//! rule a waiting reason names). On each page it checks
//! that every form field is labelled, that no text reads "null" (or
//! "undefined", "NaN", "[object …"), that the page fits 390 pixels wide,
//! that the browser logged no error and that no request failed.
//! Screenshots of every page at 1280 and 390 pixels wide go to
//! `console-screenshots/` (kept out of git).
//!
//! Chromium and chromedriver must be installed (`scripts/install-chromium`,
//! which CI runs): without them the test fails, it never skips.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder, Locator};
use reqwest::Method;
use serde_json::{json, Value};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const OPERATOR: &str = "console-browser-test-operator";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The last 60 lines of the file at `path` (for a failure's message).
fn log_tail(path: &std::path::Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(60)..].join("\n")
}

/// Kills a child process when dropped (pass or fail).
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Kills a child started in a process group of its own
/// ([`std::os::unix::process::CommandExt::process_group`]) and every
/// process of that group when dropped: chromedriver's Chromium outlived a
/// killed chromedriver, and a failed run left it running.
struct KilledGroup(Child);

impl Drop for KilledGroup {
    fn drop(&mut self) {
        let group = format!("-{}", self.0.id());
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stderr(Stdio::null())
            .status();
        let _ = self.0.wait();
    }
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| PathBuf::from(dir).join(name))
        .find(|p| p.is_file())
}

async fn wait_http(url: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if reqwest::get(url).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{url} did not answer within 60 s");
}

/// chromedriver's log of the browser's console (`goog:loggingPrefs`).
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/se/log",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(r#"{"type":"browser"}"#.to_owned()))
    }
}

/// A webhook receiver on loopback: `/hook` answers 200 (and counts),
/// `/failing` answers 503. Returns both URLs and the count.
async fn receiver() -> (String, String, Arc<Mutex<usize>>) {
    let count = Arc::new(Mutex::new(0));
    let seen = Arc::clone(&count);
    let app = axum::Router::new()
        .route(
            "/hook",
            axum::routing::post(move || {
                let seen = Arc::clone(&seen);
                async move {
                    *seen.lock().unwrap() += 1;
                    "ok"
                }
            }),
        )
        .route(
            "/failing",
            axum::routing::post(|| async { (http::StatusCode::SERVICE_UNAVAILABLE, "down") }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (
        format!("http://{addr}/hook"),
        format!("http://{addr}/failing"),
        count,
    )
}

struct Console {
    browser: Client,
    base: String,
    shots: PathBuf,
    problems: Vec<String>,
}

impl Console {
    /// Opens the landing page: the one address the test types.
    async fn open(&self) {
        self.browser
            .goto(&format!("{}/console/", self.base))
            .await
            .unwrap();
    }

    /// Runs `script` (a function body) and returns its value.
    async fn js(&self, script: &str) -> Value {
        self.browser.execute(script, vec![]).await.unwrap()
    }

    /// The text of the dialog the page opens (the route asks after the
    /// click's hash change, which a busy machine may run late), waiting up
    /// to 10 s for it.
    async fn alert_text(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match self.browser.get_alert_text().await {
                Ok(text) => return text,
                Err(e) => assert!(Instant::now() < deadline, "no dialog opened: {e}"),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until the page's `h1` starts with `title`.
    async fn heading(&self, title: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let text = match self.browser.find(Locator::Css("main h1")).await {
                Ok(h1) => h1.text().await.unwrap_or_default(),
                Err(_) => String::new(),
            };
            if text.starts_with(title) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "waited for the heading {title:?}, the page shows {text:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until `script` (a JS expression) is truthy.
    async fn until(&self, what: &str, script: &str, within: Duration) -> Value {
        let deadline = Instant::now() + within;
        loop {
            let value = self
                .browser
                .execute(&format!("return ({script});"), vec![])
                .await
                .unwrap();
            let truthy = match &value {
                Value::Null | Value::Bool(false) => false,
                Value::String(s) => !s.is_empty(),
                Value::Number(n) => n.as_f64() != Some(0.0),
                _ => true,
            };
            if truthy {
                return value;
            }
            if Instant::now() >= deadline {
                // What the page showed, for the one reading the failure.
                if let Ok(png) = self.browser.screenshot().await {
                    let _ = std::fs::write(self.shots.join("timed-out.png"), png);
                }
                panic!("waited {within:?} for {what} (console-screenshots/timed-out.png)");
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    async fn fill(&self, label: &str, text: &str) {
        let id: String = serde_json::from_value(
            self.browser
                .execute(
                    "const l = Array.from(document.querySelectorAll('label')).find(l => l.textContent.trim() === arguments[0]); return l ? l.htmlFor : null;",
                    vec![json!(label)],
                )
                .await
                .unwrap(),
        )
        .unwrap_or_else(|_| panic!("no field labelled {label:?}"));
        let field = self
            .browser
            .find(Locator::Id(&id))
            .await
            .unwrap_or_else(|_| panic!("the label {label:?} names no field"));
        field.clear().await.unwrap();
        field.send_keys(text).await.unwrap();
    }

    async fn click(&self, css: &str) {
        self.browser
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|_| panic!("nothing matches {css}"))
            .click()
            .await
            .unwrap();
    }

    async fn click_text(&self, tag: &str, text: &str) {
        let xpath = format!("//{tag}[normalize-space(.)='{text}']");
        self.browser
            .find(Locator::XPath(&xpath))
            .await
            .unwrap_or_else(|_| panic!("no {tag} {text:?}"))
            .click()
            .await
            .unwrap();
    }

    /// Every form field labelled, no text reading "null" or the like, the
    /// page no wider than a 390-pixel window, the browser's console free of
    /// errors, no request failed (but `allowed` answers); then a
    /// screenshot at both widths.
    async fn check(&mut self, name: &str, allowed: &[&str]) {
        let absent = self.js(ABSENT_VALUES).await;
        if absent.as_array().is_some_and(|a| !a.is_empty()) {
            self.problems
                .push(format!("{name}: an absent value printed: {absent}"));
        }
        let unlabelled = self
            .browser
            .execute(
                "return Array.from(document.querySelectorAll('input, select, textarea')).filter(c => !(c.labels && c.labels.length) && !c.getAttribute('aria-label')).map(c => c.outerHTML);",
                vec![],
            )
            .await
            .unwrap();
        if unlabelled.as_array().is_some_and(|a| !a.is_empty()) {
            self.problems
                .push(format!("{name}: fields without a label: {unlabelled}"));
        }
        let failed = self
            .browser
            .execute(
                "return performance.getEntriesByType('resource').filter(e => e.responseStatus >= 400 || e.responseStatus === 0 && e.transferSize === 0 && e.decodedBodySize === 0 && e.initiatorType === 'fetch').map(e => e.responseStatus + ' ' + e.name);",
                vec![],
            )
            .await
            .unwrap();
        for entry in failed.as_array().into_iter().flatten() {
            let entry = entry.as_str().unwrap_or_default();
            if !allowed.iter().any(|a| entry.starts_with(a)) {
                self.problems
                    .push(format!("{name}: failed request {entry}"));
            }
        }
        self.browser
            .execute("performance.clearResourceTimings();", vec![])
            .await
            .unwrap();
        let log = self.browser.issue_cmd(BrowserLog).await.unwrap();
        for entry in log.as_array().into_iter().flatten() {
            let message = entry["message"].as_str().unwrap_or_default();
            // The deliberate validation answer is logged by Chromium as a
            // failed resource; it is the one the test asked for.
            let expected = allowed
                .iter()
                .any(|a| message.contains(a.split_whitespace().next().unwrap_or("-")));
            if entry["level"] == "SEVERE" && !expected {
                self.problems
                    .push(format!("{name}: browser console error: {message}"));
            }
        }
        for width in [1280u32, 390] {
            self.browser.set_window_size(width, 900).await.unwrap();
            tokio::time::sleep(Duration::from_millis(250)).await;
            // The whole page in the picture (up to about 4 000 pixels high).
            let tall = self
                .js("return document.documentElement.scrollHeight;")
                .await
                .as_u64()
                .map_or(900, |h| h + 200) // the window's own frame
                .clamp(900, 4000);
            self.browser
                .set_window_size(width, u32::try_from(tall).unwrap_or(900))
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(250)).await;
            let png = self.browser.screenshot().await.unwrap();
            std::fs::write(self.shots.join(format!("{name}-{width}.png")), png).unwrap();
            let overflow = self.js(OVERFLOW).await;
            if overflow.as_array().is_some_and(|a| !a.is_empty()) {
                self.problems.push(format!(
                    "{name}: wider than a {width}-pixel window: {overflow}"
                ));
            }
        }
        self.browser.set_window_size(1280, 900).await.unwrap();
        tokio::time::sleep(Duration::from_millis(150)).await;
    }

    /// Clicks the element `xpath` finds (scrolled into view first).
    async fn click_xpath(&self, xpath: &str) {
        let element = self
            .browser
            .find(Locator::XPath(xpath))
            .await
            .unwrap_or_else(|_| panic!("nothing matches {xpath}"));
        self.browser
            .execute(
                "arguments[0].scrollIntoView({block: 'center'});",
                vec![serde_json::to_value(&element).unwrap()],
            )
            .await
            .unwrap();
        element.click().await.unwrap();
    }

    /// Fills the field labelled `label` of the row (fieldset) whose legend
    /// reads `legend`, e.g. ("Rule 1", "Attribute").
    async fn fill_in(&self, legend: &str, label: &str, text: &str) {
        let id: String = serde_json::from_value(
            self.browser
                .execute(
                    &format!("{IN_ROW} const f = inRow(arguments[0], arguments[1]); return f ? f.id : null;"),
                    vec![json!(legend), json!(label)],
                )
                .await
                .unwrap(),
        )
        .unwrap_or_else(|_| panic!("no field {label:?} in {legend:?}"));
        let field = self.browser.find(Locator::Id(&id)).await.unwrap();
        field.clear().await.unwrap();
        field.send_keys(text).await.unwrap();
    }

    /// Clicks the link `text` of the navigation.
    async fn nav(&self, text: &str) {
        self.click_xpath(&format!("//nav//a[normalize-space(.)='{text}']"))
            .await;
    }

    /// Clicks the link `view` in the row of mode `mode` of the modes list.
    async fn mode_view(&self, mode: &str, view: &str) {
        self.click_xpath(&format!(
            "//main//tr[td[1][normalize-space(.)='{mode}']]//a[normalize-space(.)='{view}']"
        ))
        .await;
    }
}

/// `inRow(legend, label)`: the control labelled `label` in the fieldset
/// whose own legend reads `legend` (a row of the attributes-and-rules
/// editor), or null.
const IN_ROW: &str = "const inRow = (legend, label) => { const row = Array.from(document.querySelectorAll('fieldset')).find(f => f.querySelector(':scope > legend') && f.querySelector(':scope > legend').textContent === legend); const l = row && Array.from(row.querySelectorAll('label')).find(l => l.textContent === label); return l ? document.getElementById(l.htmlFor) : null; };";

/// Text nodes of the page (outside JSON shown as such) that print an
/// absent value.
const ABSENT_VALUES: &str = "const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT); const bad = []; while (walk.nextNode()) { const n = walk.currentNode; if (n.parentElement.closest('textarea, .diff, script, noscript')) continue; if (/\\b(null|undefined|NaN)\\b|\\[object /.test(n.textContent)) bad.push(n.textContent.slice(0, 80)); } return bad;";

/// Whether the page scrolls sideways: then its width, and the elements
/// that stick out of the window or whose text sticks out of them (not
/// counting those inside a box that scrolls itself).
const OVERFLOW: &str = "const root = document.documentElement; if (root.scrollWidth <= root.clientWidth) return []; const wide = Array.from(document.querySelectorAll('body *')).filter(e => !e.closest('.table-wrap, .diff, pre') && (e.getBoundingClientRect().right > root.clientWidth + 1 || e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX === 'visible')).slice(0, 5).map(e => e.tagName + ': ' + (e.textContent || '').slice(0, 40)); return ['the page is ' + root.scrollWidth + ' pixels wide in a ' + root.clientWidth + '-pixel window'].concat(wide);";

/// Starts a search for `player` at `mmr`; returns the ticket's token.
async fn search(
    http: &reqwest::Client,
    base: &str,
    project: &str,
    key: &str,
    player: &str,
    mmr: f64,
) -> (String, String) {
    let attributes = json!({"mmr": mmr});
    search_with(http, base, project, key, "duel", player, attributes).await
}

/// Starts a search for `player` in `mode` with the ticket's `attributes`;
/// returns the ticket's id and token.
async fn search_with(
    http: &reqwest::Client,
    base: &str,
    project: &str,
    key: &str,
    mode: &str,
    player: &str,
    attributes: Value,
) -> (String, String) {
    let body = json!({"gameMode": mode, "playerId": player, "attributes": attributes});
    let url = format!("{base}/v1/projects/{project}/tickets");
    let ticket = api(http, Method::POST, url, key, Some(body)).await;
    let token = ticket["token"].as_str().unwrap().to_owned();
    let id = ticket["ticketId"].as_str().unwrap().to_owned();
    let started = http
        .post(format!("{base}/v1/searches"))
        .json(&json!({"ticket": token}))
        .send()
        .await
        .unwrap();
    assert!(
        started.status().is_success(),
        "{}",
        started.text().await.unwrap()
    );
    (id, token)
}

/// Polls each REST search of `tickets` (ticket id, token) once, which also
/// keeps it alive; each one's answer as `id: status body`.
async fn poll_all(http: &reqwest::Client, base: &str, tickets: &[(String, String)]) -> Vec<String> {
    let mut answers = Vec::with_capacity(tickets.len());
    for (id, token) in tickets {
        let answer = http
            .get(format!("{base}/v1/searches/{id}"))
            .header("Authorization", format!("Ticket {token}"))
            .send()
            .await;
        if let Ok(answer) = answer {
            let status = answer.status();
            let body = answer.text().await.unwrap_or_default();
            answers.push(format!("{id}: {status} {body}"));
        }
    }
    answers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_in_a_real_browser() {
    let (Some(chromium), Some(driver)) = (which("chromium"), which("chromedriver")) else {
        panic!(
            "Chromium and chromedriver are needed for the console's browser test: run scripts/install-chromium (CI does)"
        );
    };
    let dir = std::env::temp_dir().join(format!("mp-console-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let db = format!("sqlite://{}?mode=rwc", dir.join("dev.db").display());
    let _dev = Killed(
        Command::new(env!("CARGO_BIN_EXE_matchplane"))
            .args(["dev", "--listen", &format!("127.0.0.1:{port}")])
            .args(["--database-url", &db, "--operator-token", OPERATOR])
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("dev.log")).unwrap())
            .spawn()
            .unwrap(),
    );
    wait_http(&format!("{base}/healthz")).await;
    let driver_port = free_port();
    let _driver = KilledGroup(
        Command::new(driver)
            .process_group(0)
            .arg(format!("--port={driver_port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_http(&format!("http://127.0.0.1:{driver_port}/status")).await;

    let http = reqwest::Client::new();
    let body = json!({"name": "console", "tier": "pro"});
    let project = api(
        &http,
        Method::POST,
        format!("{base}/v1/projects"),
        OPERATOR,
        Some(body),
    )
    .await;
    let project = project["id"].as_str().unwrap().to_owned();
    let url = format!("{base}/v1/projects/{project}/keys");
    let key = api(
        &http,
        Method::POST,
        url,
        OPERATOR,
        Some(json!({"name": "console"})),
    )
    .await;
    let key = key["key"].as_str().unwrap().to_owned();
    let (hook, failing_hook, hooks) = receiver().await;

    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({"binary": chromium, "args": ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,900"]}),
    );
    caps.insert("goog:loggingPrefs".into(), json!({"browser": "ALL"}));
    let browser = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{driver_port}"))
        .await
        .expect("chromedriver starts a Chromium session");
    let shots = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("console-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let mut c = Console {
        browser,
        base: base.clone(),
        shots,
        problems: Vec::new(),
    };

    // The landing page: the one address typed; every other page is
    // reached by a click.
    c.open().await;
    c.heading("Sign in").await;
    c.check("sign-in", &[]).await;
    // No key: said at the key's field, nothing sent, the project id kept.
    c.fill("Project id", &project).await;
    c.click("main form button[type=submit]").await;
    c.until(
        "the missing key marked",
        "(() => { const l = Array.from(document.querySelectorAll('label')).find(l => l.textContent === 'API key or operator token'); const f = document.getElementById(l.htmlFor); const p = document.getElementById(Array.from(document.querySelectorAll('label')).find(l => l.textContent === 'Project id').htmlFor); return f.getAttribute('aria-invalid') === 'true' && document.getElementById(f.id + '-error').textContent.includes('Enter an API key') && p.value !== '' && document.activeElement === f; })()",
        Duration::from_secs(10),
    )
    .await;
    // A project the key does not open is marked on the project's field.
    c.fill("Project id", "prj_01J0000000000000000000000").await;
    c.fill("API key or operator token", &key).await;
    c.click("main form button[type=submit]").await;
    c.until(
        "the wrong project marked",
        "(() => { const l = Array.from(document.querySelectorAll('label')).find(l => l.textContent === 'Project id'); const f = document.getElementById(l.htmlFor); return f.getAttribute('aria-invalid') === 'true' && document.getElementById(f.id + '-error').textContent.includes('project id'); })()",
        Duration::from_secs(10),
    )
    .await;
    c.check("sign-in-wrong-project", &["404 "]).await;
    c.fill("Project id", &project).await;
    c.fill("API key or operator token", &key).await;
    c.click("main form button[type=submit]").await;
    c.heading("Game modes").await;
    let html: String = serde_json::from_value(
        c.browser
            .execute("return document.documentElement.outerHTML;", vec![])
            .await
            .unwrap(),
    )
    .unwrap();
    assert!(!html.contains(&key), "the key is rendered into the page");
    c.check("modes-empty", &[]).await;
    // The skip link moves the focus to the content and stays on the page.
    let skipped = c
        .js("document.querySelector('a.skip').click(); return [location.hash, document.activeElement.id];")
        .await;
    assert_eq!(skipped, json!(["#/modes", "main"]));

    // A mode with an error (tolerance below the tier's floor), then fixed.
    c.click_text("a", "New game mode").await;
    c.heading("New game mode").await;
    c.check("mode-new", &[]).await;
    c.fill("Name", "duel").await;
    c.fill("Cycle duration (seconds)", "1").await;
    c.fill("Base tolerance", "0").await;
    c.fill("Webhook URL", &hook).await;
    c.click("main form button[type=submit]").await;
    let message = c
        .until(
            "the error next to the base tolerance",
            "(() => { const l = Array.from(document.querySelectorAll('label')).find(l => l.textContent === 'Base tolerance'); const f = document.getElementById(l.htmlFor); return f.getAttribute('aria-invalid') === 'true' && document.getElementById(f.id + '-error').textContent; })()",
            Duration::from_secs(10),
        )
        .await;
    assert!(
        message.as_str().unwrap().contains("baseTolerance"),
        "{message}"
    );
    c.check("mode-error", &["422 "]).await;
    // 1 % of the MMR range (30 points), never widening: the far players
    // below wait, the near ones match.
    c.fill("Base tolerance", "1").await;
    c.fill("Expansion multiplier", "1").await;
    c.fill("Other settings (JSON)", r#"{"ratings": {"enabled": true}}"#)
        .await;
    c.click("main form button[type=submit]").await;
    c.heading("Edit duel").await;
    // The new webhook's signing secret, which the API shows this once.
    let secret = c
        .until(
            "the webhook secret shown once",
            "document.querySelector('.secret-box code.secret') && document.querySelector('.secret-box code.secret').textContent",
            Duration::from_secs(5),
        )
        .await;
    let secret = secret.as_str().unwrap_or_default();
    assert!(
        secret.starts_with("whsec_") && !secret.contains('*'),
        "{secret}"
    );
    c.until(
        "the webhook's health on the mode page",
        "document.getElementById('webhook-health') && document.getElementById('webhook-health').dataset.health === 'healthy'",
        Duration::from_secs(5),
    )
    .await;
    c.check("mode-edit", &[]).await;

    // A second version, so the history has something to compare. Team
    // assignment offers exactly the values the API takes, and the one
    // chosen is the one saved.
    let teams = "Array.from(document.querySelectorAll('label')).find(l => l.textContent.trim() === 'Team assignment').htmlFor";
    let offered = c
        .js(&format!(
            "return Array.from(document.getElementById({teams}).options).map(o => o.value);"
        ))
        .await;
    let schema: Value = serde_json::from_str(include_str!("../openapi/openapi.json")).unwrap();
    assert_eq!(
        offered, schema["components"]["schemas"]["TeamAssignment"]["enum"],
        "the console's team assignments"
    );
    c.js(&format!(
        "const s = document.getElementById({teams}); s.value = 'snake'; s.dispatchEvent(new Event('change')); return s.value;"
    ))
    .await;
    c.fill("Ticket time to live (seconds)", "900").await;
    c.click("main form button[type=submit]").await;
    c.until(
        "version 2 saved",
        "document.getElementById('status').textContent.includes('version 2')",
        Duration::from_secs(10),
    )
    .await;
    let url = format!("{base}/v1/projects/{project}/game-modes/duel");
    let saved = api(&http, Method::GET, url.clone(), &key, None).await;
    assert_eq!(saved["teamAssignment"], "snake", "{saved}");
    c.click_text("a", "Version history").await;
    c.heading("Version history of duel").await;
    c.until(
        "a diff line",
        "Array.from(document.querySelectorAll('.diff .add')).some(e => e.textContent.includes('900'))",
        Duration::from_secs(5),
    )
    .await;
    c.check("mode-versions", &[]).await;

    // Someone else saves the mode while its page is open here: this page's
    // save is refused (it sends the version it opened as If-Match), says
    // so, and overwrites nothing.
    c.nav("Game modes").await;
    c.heading("Game modes").await;
    c.mode_view("duel", "Edit").await;
    c.heading("Edit duel").await;
    let mut theirs = api(&http, Method::GET, url.clone(), &key, None).await;
    theirs["ticketTtlSeconds"] = json!(901);
    api(&http, Method::PUT, url.clone(), &key, Some(theirs)).await;
    c.fill("Cycle duration (seconds)", "2").await;
    c.click("main form button[type=submit]").await;
    c.until(
        "the save refused as stale",
        "document.querySelector('[role=alert].error') && document.querySelector('[role=alert].error').textContent.includes('someone saved a newer version')",
        Duration::from_secs(10),
    )
    .await;
    c.check("mode-conflict", &["412 "]).await;
    let kept = api(&http, Method::GET, url.clone(), &key, None).await;
    assert_eq!(
        (
            kept["ticketTtlSeconds"].clone(),
            kept["matchmakingCycleDurationSeconds"].clone()
        ),
        (json!(901), json!(1.0)),
        "{kept}"
    );
    c.click_text("button", "open the newest version").await;
    c.until(
        "the newest version opened",
        "(() => { const l = Array.from(document.querySelectorAll('label')).find(l => l.textContent === 'Ticket time to live (seconds)'); return l && document.getElementById(l.htmlFor).value === '901'; })()",
        Duration::from_secs(10),
    )
    .await;
    // Leaving a form with unsaved edits asks first; staying keeps them.
    c.fill("Ticket time to live (seconds)", "902").await;
    c.nav("Matches").await;
    let asked = c.alert_text().await;
    assert!(asked.contains("unsaved"), "{asked}");
    c.browser.dismiss_alert().await.unwrap();
    c.heading("Edit duel").await;
    let kept = c
        .js("return Array.from(document.querySelectorAll('label')).filter(l => l.textContent === 'Ticket time to live (seconds)').map(l => document.getElementById(l.htmlFor).value);")
        .await;
    assert_eq!(kept, json!(["902"]), "the edit is kept");

    // The modes list: its views are links (five, each a real <a>), and the
    // webhook's health is shown. (Leaving the edit above, with its unsaved
    // edit, is confirmed.)
    c.nav("Game modes").await;
    c.alert_text().await;
    c.browser.accept_alert().await.unwrap();
    c.heading("Game modes").await;
    let row = c
        .js("const row = Array.from(document.querySelectorAll('main tbody tr')).find(r => r.cells[0].textContent === 'duel'); return {links: Array.from(row.querySelectorAll('a')).map(a => a.getAttribute('href')), text: row.textContent};")
        .await;
    assert_eq!(
        row["links"],
        json!([
            "#/modes/duel/edit",
            "#/modes/duel/live",
            "#/modes/duel/charts",
            "#/modes/duel/versions",
            "#/modes/duel/leaderboard"
        ]),
        "{row}"
    );
    let text = row["text"].as_str().unwrap();
    assert!(text.contains("healthy") && !text.contains("http"), "{text}");
    c.check("modes", &[]).await;

    // The live pool fills from searches started here, far apart in MMR.
    c.mode_view("duel", "Live pool").await;
    c.heading("Live pool of duel").await;
    let mut tickets = Vec::new();
    for (i, mmr) in [100.0, 1000.0, 2000.0, 2900.0].into_iter().enumerate() {
        tickets.push(search(&http, &base, &project, &key, &format!("far-{i}"), mmr).await);
    }
    c.until(
        "four searching in the live view",
        "document.querySelector('[data-searching]') && document.querySelector('[data-searching]').dataset.searching === '4'",
        Duration::from_secs(20),
    )
    .await;
    c.until(
        "the waiting reasons chart",
        "document.querySelector('figure svg rect')",
        Duration::from_secs(5),
    )
    .await;
    c.check("live", &[]).await;
    // Paused, the figures stay as they are (a reader keeps their place);
    // resumed, they are redrawn again.
    c.click("#pause-live").await;
    c.js("window.shownCards = document.querySelector('[data-searching] .cards'); return true;")
        .await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    let kept = c
        .js("return [document.getElementById('pause-live').getAttribute('aria-pressed'), window.shownCards.isConnected];")
        .await;
    assert_eq!(kept, json!(["true", true]), "paused, the live view redrew");
    c.click("#pause-live").await;
    c.until(
        "the live view redrawn after resuming",
        "!window.shownCards.isConnected",
        Duration::from_secs(10),
    )
    .await;
    // Two close players make a match.
    // (Kept in the list polled below, so a slow machine's late cycle
    // finds them still searching.)
    tickets.push(search(&http, &base, &project, &key, "near-a", 1500.0).await);
    tickets.push(search(&http, &base, &project, &key, "near-b", 1510.0).await);
    // REST searches end when unpolled: keep the far ones alive meanwhile.
    poll_all(&http, &base, &tickets).await;

    c.nav("Matches").await;
    c.heading("Matches").await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut last_polls: Vec<String> = Vec::new();
    while c
        .browser
        .find(Locator::Css("main table a[href^='#/matches/mat_']"))
        .await
        .is_err()
    {
        assert!(
            Instant::now() < deadline,
            "no match appeared in the list; the searches read:\n{}\nthe server's log ends:\n{}",
            last_polls.join("\n"),
            log_tail(&dir.join("dev.log"))
        );
        last_polls = poll_all(&http, &base, &tickets).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        c.click("#refresh").await;
        c.heading("Matches").await;
    }
    // The only page of matches: no older ones, and nothing printed for the
    // absent cursor.
    c.check("matches", &[]).await;
    // Choosing a mode in the filter changes nothing until Show.
    let chosen = c
        .js("const s = document.querySelector('main form.filter select'); s.value = 'duel'; s.dispatchEvent(new Event('change', {bubbles: true})); document.querySelector('main table').dataset.before = '1'; return location.hash;")
        .await;
    assert_eq!(chosen, json!("#/matches"));
    c.click("#show-matches").await;
    c.until(
        "the matches of duel",
        "location.hash === '#/matches?gameMode=duel' && document.querySelector(\"main table:not([data-before]) a[href^='#/matches/mat_']\")",
        Duration::from_secs(10),
    )
    .await;
    c.click("main table a[href^='#/matches/mat_']").await;
    c.heading("Match mat_").await;
    c.until(
        "the delivery row",
        "Array.from(document.querySelectorAll('main td')).some(td => td.textContent === 'match.made')",
        Duration::from_secs(10),
    )
    .await;
    c.until(
        "the webhook delivered",
        "Array.from(document.querySelectorAll('main td')).some(td => td.textContent === 'succeeded') || (document.getElementById('refresh-deliveries').click(), false)",
        Duration::from_secs(20),
    )
    .await;
    c.check("match", &[]).await;
    let before = *hooks.lock().unwrap();
    c.click("#redeliver").await;
    c.until(
        "the redelivery queued",
        "document.getElementById('status').textContent.includes('Queued again')",
        Duration::from_secs(10),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while *hooks.lock().unwrap() <= before {
        assert!(Instant::now() < deadline, "the redelivery never arrived");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    c.click("#webhook-test").await;
    c.until(
        "the webhook test answered",
        "document.getElementById('status').textContent.includes('Test delivered')",
        Duration::from_secs(10),
    )
    .await;
    c.check("match-redelivered", &[]).await;

    // The mode's webhook starts failing: the modes list and the mode page
    // show it, and the mode's deliveries list the failed attempt.
    c.click_xpath("//main//a[starts-with(normalize-space(.), 'the mode duel')]")
        .await;
    c.heading("Edit duel").await;
    c.fill("Webhook URL", &failing_hook).await;
    c.click("main form button[type=submit]").await;
    c.until(
        "version 4 saved (the third was saved through the API above)",
        "document.getElementById('status').textContent.includes('version 4')",
        Duration::from_secs(10),
    )
    .await;
    let pair = vec![
        search(&http, &base, &project, &key, "near-c", 1200.0).await,
        search(&http, &base, &project, &key, "near-d", 1205.0).await,
    ];
    c.nav("Game modes").await;
    c.heading("Game modes").await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let failing = c
            .js("const row = Array.from(document.querySelectorAll('main tbody tr')).find(r => r.cells[0].textContent === 'duel'); return row ? row.cells[5].textContent : '';")
            .await;
        if failing.as_str().unwrap_or_default().starts_with("failing") {
            assert!(failing.as_str().unwrap().contains("HTTP 503"), "{failing}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the modes list never showed the webhook failing: {failing}; the server's log ends:\n{}",
            log_tail(&dir.join("dev.log"))
        );
        poll_all(&http, &base, &pair).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        // The link to the page shown shows it again, fresh.
        c.nav("Game modes").await;
        c.heading("Game modes").await;
    }
    c.check("modes-failing", &[]).await;
    c.mode_view("duel", "Edit").await;
    c.heading("Edit duel").await;
    let health = c
        .until(
            "the failing webhook and its failed attempt on the mode page",
            "document.getElementById('webhook-health').dataset.health === 'failing' && Array.from(document.querySelectorAll('main td')).some(td => td.textContent.startsWith('503 at')) && document.getElementById('webhook-health').textContent",
            Duration::from_secs(10),
        )
        .await;
    assert!(health.as_str().unwrap().contains("HTTP 503"), "{health}");
    c.check("mode-failing", &[]).await;

    // The charts read the stats history. Two pairs of minutes recorded a
    // while ago with one empty minute between them: the line breaks there.
    let store = matchplane_store::db::connect(&db).await.unwrap();
    let minute = matchplane_store::repos::stats_history::minute_of(
        chrono::Utc::now() - chrono::TimeDelta::minutes(15),
    );
    for (offset, searching) in [(0, 3), (1, 3), (3, 5), (4, 5)] {
        let figures = matchplane_store::repos::stats_history::Figures::of_cycle(
            searching,
            [(&[2.0, 4.0][..], Some(12.0))],
        );
        matchplane_store::repos::stats_history::record(
            &store,
            &project,
            "duel",
            minute + chrono::TimeDelta::minutes(offset) + chrono::TimeDelta::seconds(5),
            &figures,
        )
        .await
        .unwrap();
    }
    c.nav("Game modes").await;
    c.heading("Game modes").await;
    c.mode_view("duel", "Charts").await;
    c.heading("Charts of duel").await;
    c.until(
        "a line in the charts",
        "document.querySelector('figure svg path.line')",
        Duration::from_secs(5),
    )
    .await;
    for width in [1280u32, 390] {
        c.browser.set_window_size(width, 900).await.unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let chart = c.js(SEARCHING_CHART).await;
        let segments: Vec<Vec<(f64, f64)>> =
            serde_json::from_value(chart["segments"].clone()).unwrap_or_else(|_| panic!("{chart}"));
        let step = chart["step"].as_f64().unwrap();
        // A line, not an area: no closed path, nothing filled.
        assert_eq!(chart["fill"], "none", "{chart}");
        assert!(
            !chart["d"].as_str().unwrap().contains(['Z', 'z']),
            "{chart}"
        );
        // The recorded minutes: two segments of two points, one slot apart
        // within each, two slots (the empty minute) between them.
        assert!(segments.len() >= 2, "{chart}");
        let (a, b) = (&segments[0], &segments[1]);
        assert_eq!((a.len(), b.len()), (2, 2), "{chart}");
        let near = |x: f64, y: f64| (x - y).abs() < 0.2;
        assert!(near(a[1].0 - a[0].0, step), "{chart}");
        assert!(near(b[0].0 - a[1].0, 2.0 * step), "{chart}");
        assert!(near(b[1].0 - b[0].0, step), "{chart}");
        assert!(near(a[0].1, a[1].1) && b[0].1 < a[0].1, "{chart}");
        // Whole numbers of players on the axis, labels as large as the
        // page's CSS says: the chart is drawn at its box's width, not
        // scaled down.
        let ticks: Vec<String> = serde_json::from_value(chart["ticks"].clone()).unwrap();
        assert!(
            ticks.len() >= 2 && ticks.iter().all(|t| t.parse::<u32>().is_ok()),
            "{chart}"
        );
        let scale = chart["scale"].as_f64().unwrap();
        assert!((scale - 1.0).abs() < 0.02, "{chart}");
        assert!(chart["fontPx"].as_f64().unwrap() >= 11.0, "{chart}");
    }
    c.browser.set_window_size(1280, 900).await.unwrap();
    // The range buttons: the pressed one readable (contrast of at least
    // 4.5:1) and shaped like the others.
    let buttons = c.js(RANGE_BUTTONS).await;
    assert!(buttons["contrast"].as_f64().unwrap() >= 4.5, "{buttons}");
    assert_eq!(buttons["heights"][0], buttons["heights"][1], "{buttons}");
    c.check("charts", &[]).await;
    c.click_text("button", "Last day").await;
    c.until(
        "the day's charts",
        "document.querySelector('.range [aria-pressed=true]').textContent === 'Last day' && document.querySelector('figure svg')",
        Duration::from_secs(5),
    )
    .await;
    c.check("charts-day", &[]).await;
    c.click_text("button", "Last 14 days").await;
    c.until(
        "the fortnight's charts",
        "document.querySelector('.range [aria-pressed=true]').textContent === 'Last 14 days' && document.querySelector('figure svg')",
        Duration::from_secs(5),
    )
    .await;
    c.check("charts-14d", &[]).await;
    c.nav("Game modes").await;
    c.heading("Game modes").await;
    c.mode_view("duel", "Leaderboard").await;
    c.heading("Leaderboard of duel").await;
    c.check("leaderboard", &[]).await;

    // Saving a mode through the form keeps every field of the blocks it
    // edits part of: the parties' mmr and incompleteTimeoutSeconds, the
    // algorithm's maxTolerance, which the form does not show.
    let parties = json!({"allowParties": true, "maxSize": 2, "keepTogether": true,
                         "incompleteTimeoutSeconds": 10, "mmr": {"blend": 0.5}});
    let url = format!("{base}/v1/projects/{project}/game-modes");
    api(
        &http,
        Method::POST,
        url,
        &key,
        Some(json!({
            "name": "partied", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5,
                          "expansionMultiplier": 2, "maxTolerance": 40},
            "parties": parties, "webhook": {"url": hook, "enabled": true}
        })),
    )
    .await;
    c.nav("Game modes").await;
    c.heading("Game modes").await;
    // No ratings, no Leaderboard link (and the page, opened by its
    // address, says why instead of failing).
    let links = c
        .js("const row = Array.from(document.querySelectorAll('main tbody tr')).find(r => r.cells[0].textContent === 'partied'); return Array.from(row.querySelectorAll('a')).map(a => a.textContent);")
        .await;
    assert_eq!(
        links,
        json!(["Edit", "Live pool", "Charts", "History"]),
        "{links}"
    );
    c.js("location.hash = '#/modes/partied/leaderboard';").await;
    c.heading("Leaderboard of partied").await;
    c.until(
        "the leaderboard saying the mode keeps no ratings",
        "document.getElementById('no-ratings')",
        Duration::from_secs(5),
    )
    .await;
    c.check("leaderboard-no-ratings", &[]).await;
    c.nav("Game modes").await;
    c.heading("Game modes").await;
    c.mode_view("partied", "Edit").await;
    c.heading("Edit partied").await;
    c.fill("Ticket time to live (seconds)", "700").await;
    c.click("main form button[type=submit]").await;
    c.until(
        "the partied mode's version 2 saved",
        "document.getElementById('status').textContent.includes('version 2')",
        Duration::from_secs(10),
    )
    .await;
    let url = format!("{base}/v1/projects/{project}/game-modes/partied");
    let saved = api(&http, Method::GET, url, &key, None).await;
    assert_eq!(saved["ticketTtlSeconds"], 700, "{saved}");
    assert_eq!(
        saved["parties"], parties,
        "the parties' fields the form does not show: {saved}"
    );
    assert_eq!(saved["algorithm"]["maxTolerance"], 40.0, "{saved}");
    assert_eq!(saved["webhook"]["url"], json!(hook), "{saved}");

    // A cancelled proposal is listed as one, not as a made match, and has
    // no Redeliver button (it never had a webhook).
    let url = format!("{base}/v1/projects/{project}/game-modes");
    api(
        &http,
        Method::POST,
        url,
        &key,
        Some(json!({
            "name": "accepting", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "fifo"}, "acceptance": {"timeoutSeconds": 60},
            "webhook": {"url": hook, "enabled": true}
        })),
    )
    .await;
    let pair = vec![
        search_with(
            &http,
            &base,
            &project,
            &key,
            "accepting",
            "asked-a",
            json!({"mmr": 1500}),
        )
        .await,
        search_with(
            &http,
            &base,
            &project,
            &key,
            "accepting",
            "asked-b",
            json!({"mmr": 1500}),
        )
        .await,
    ];
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let polls = poll_all(&http, &base, &pair).await;
        if polls.iter().all(|p| p.contains("\"proposed\"")) {
            break;
        }
        assert!(Instant::now() < deadline, "no proposal: {polls:?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let declined = http
        .post(format!("{base}/v1/searches/{}/decline", pair[0].0))
        .header("Authorization", format!("Ticket {}", pair[0].1))
        .send()
        .await
        .unwrap();
    assert!(
        declined.status().is_success(),
        "{}",
        declined.text().await.unwrap()
    );
    c.nav("Matches").await;
    c.heading("Matches").await;
    let mode_filter = "Array.from(document.querySelectorAll('label')).find(l => l.textContent.trim() === 'Game mode').htmlFor";
    c.js(&format!(
        "const s = document.getElementById({mode_filter}); s.value = 'accepting'; s.dispatchEvent(new Event('change'));"
    ))
    .await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let row = loop {
        let row = c
            .js("const t = Array.from(document.querySelectorAll('main table')).pop(); const r = t && Array.from(t.tBodies[0].rows).find(r => r.cells[1] && r.cells[1].textContent === 'accepting'); return r ? {status: r.cells[2].textContent, headers: Array.from(t.tHead.rows[0].cells).map(c => c.textContent)} : null;")
            .await;
        if row["status"] == "cancelled proposal" {
            break row;
        }
        assert!(
            Instant::now() < deadline,
            "the cancelled proposal never showed as one: {row}; the server's log ends:\n{}",
            log_tail(&dir.join("dev.log"))
        );
        poll_all(&http, &base, &pair[1..]).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        c.click("#refresh").await;
        c.heading("Matches").await;
    };
    assert_eq!(row["headers"][2], "Status", "{row}");
    c.check("matches-cancelled", &[]).await;
    c.click("main table a[href^='#/matches/mat_']").await;
    c.heading("Match mat_").await;
    let shown = c
        .until(
            "the cancelled proposal's page",
            "document.getElementById('match-status') && document.getElementById('refresh-deliveries') && {status: document.getElementById('match-status').textContent, redeliver: !!document.getElementById('redeliver'), answers: Array.from(document.querySelectorAll('main td')).map(td => td.textContent).filter(t => t === 'declined' || t === 'accepted' || t === 'none')}",
            Duration::from_secs(10),
        )
        .await;
    assert!(
        shown["status"]
            .as_str()
            .unwrap()
            .contains("cancelled proposal"),
        "{shown}"
    );
    assert_eq!(shown["redeliver"], false, "{shown}");
    assert!(
        shown["answers"]
            .as_array()
            .unwrap()
            .contains(&json!("declined")),
        "{shown}"
    );
    c.check("match-cancelled", &[]).await;

    // A mode's attributes and rules in their own fields. A rule on an
    // attribute the mode does not declare is refused beside that rule's
    // field.
    c.nav("Game modes").await;
    c.heading("Game modes").await;
    c.click_text("a", "New game mode").await;
    c.heading("New game mode").await;
    c.fill("Name", "ruled").await;
    c.click_text("button", "Add an attribute").await;
    c.fill_in("Attribute 1", "Name", "build").await;
    c.fill_in("Attribute 1", "Values", "1.4, 1.5").await;
    // A name with a space is refused beside its own row's name, not the
    // first row's.
    c.click_text("button", "Add an attribute").await;
    c.fill_in("Attribute 2", "Name", "Bad Name").await;
    c.click_text("button", "Add a rule").await;
    c.fill_in("Rule 1", "Name", "same-build").await;
    c.fill_in("Rule 1", "Attribute", "version").await;
    c.click_text("button", "Add a step").await;
    c.fill_in("Rule 1", "After (seconds)", "600").await;
    c.click("main form button[type=submit]").await;
    let message = c
        .until(
            "the error beside the rule's attribute",
            &format!("(() => {{ {IN_ROW} const f = inRow('Rule 1', 'Attribute'); return f.getAttribute('aria-invalid') === 'true' && document.getElementById(f.id + '-error').textContent; }})()"),
            Duration::from_secs(10),
        )
        .await;
    assert!(
        message.as_str().unwrap().contains("rules[0].attribute"),
        "{message}"
    );
    let beside = c
        .js(&format!("{IN_ROW} const e = (r) => document.getElementById(inRow(r, 'Name').id + '-error').textContent; return [e('Attribute 1'), e('Attribute 2')];"))
        .await;
    assert_eq!(beside[0], "", "{beside}");
    assert!(
        beside[1].as_str().unwrap().contains("attributes.Bad Name:"),
        "{beside}"
    );
    c.check("mode-rules-error", &["422 "]).await;
    c.click_xpath("//fieldset[legend[normalize-space(.)='Attribute 2']]//button[normalize-space(.)='Remove this attribute']")
        .await;
    // Fixed; the JSON view holds the very document the fields say, and the
    // fields read it back.
    c.fill_in("Rule 1", "Attribute", "build").await;
    let declared = json!({
        "attributes": {"build": {"type": "string", "values": ["1.4", "1.5"]}},
        "rules": [{"name": "same-build", "type": "equal", "attribute": "build",
                   "relax": [{"afterSeconds": 600, "off": true}]}]
    });
    c.click_text("button", "Edit as JSON").await;
    let shown = c
        .js("const l = Array.from(document.querySelectorAll('label')).find(l => l.textContent === 'Attributes and rules (JSON)'); return JSON.parse(l.control.value);")
        .await;
    assert_eq!(shown, declared);
    c.click_text("button", "Edit as fields").await;
    c.click("main form button[type=submit]").await;
    c.heading("Edit ruled").await;
    // Saved, and read back into the fields from the server's copy.
    let fields = c
        .until(
            "the saved attribute and rule in their fields",
            &format!("(() => {{ {IN_ROW} const v = (r, l) => inRow(r, l) && inRow(r, l).value; return v('Rule 1', 'Attribute') === 'build' && [v('Attribute 1', 'Name'), v('Attribute 1', 'Values'), v('Rule 1', 'Name'), v('Rule 1', 'After (seconds)')]; }})()"),
            Duration::from_secs(10),
        )
        .await;
    assert_eq!(fields, json!(["build", "1.4, 1.5", "same-build", "600"]));
    c.check("mode-rules", &[]).await;

    // Two builds at one MMR: the rule keeps them apart, and the live pool's
    // Rules section says so, this cycle and over the last minutes.
    let mut builds = Vec::new();
    for (player, build) in [("old-build", "1.4"), ("new-build", "1.5")] {
        let attributes = json!({"mmr": 1500, "build": build});
        let search = search_with(&http, &base, &project, &key, "ruled", player, attributes);
        builds.push(search.await);
    }
    c.nav("Game modes").await;
    c.heading("Game modes").await;
    c.mode_view("ruled", "Live pool").await;
    c.heading("Live pool of ruled").await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let row = loop {
        let row = c.js(RULE_ROW).await;
        let cells: Vec<String> = serde_json::from_value(row.clone()).unwrap_or_default();
        let count = |i: usize| {
            cells
                .get(i)
                .and_then(|c| c.parse::<u64>().ok())
                .unwrap_or(0)
        };
        if count(2) == 2 && count(3) >= 1 && count(4) >= 1 {
            break cells;
        }
        assert!(
            Instant::now() < deadline,
            "the Rules section never counted the two builds: {row}; the server's log ends:\n{}",
            log_tail(&dir.join("dev.log"))
        );
        poll_all(&http, &base, &builds).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(row[1], "equal on build", "{row:?}");
    c.until(
        "the rule's line over the last minutes",
        "Array.from(document.querySelectorAll('section.rules figure')).some(f => f.querySelector('figcaption').textContent === 'Turned away by rule, per minute' && f.querySelector('svg path.line, svg circle.dot'))",
        Duration::from_secs(5),
    )
    .await;
    c.check("live-rules", &[]).await;

    // A simulation of the repository's example scenario: its arrivalsCsv
    // names a file the browser cannot read, so it is refused next to the
    // upload field until the file is uploaded; then its arrivals count.
    let scenario = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/scenario.json"
    ))
    .unwrap();
    c.nav("Simulate").await;
    c.heading("Simulate").await;
    let area = c.browser.find(Locator::Css("main textarea")).await.unwrap();
    c.browser
        .execute(
            "arguments[0].value = arguments[1];",
            vec![serde_json::to_value(&area).unwrap(), json!(scenario)],
        )
        .await
        .unwrap();
    c.click_text("button", "Run the simulation").await;
    let refused = c
        .until(
            "the arrivals CSV asked for",
            "(() => { const l = Array.from(document.querySelectorAll('label')).find(l => l.textContent === 'Arrivals CSV (optional)'); const f = document.getElementById(l.htmlFor); return f.getAttribute('aria-invalid') === 'true' && document.getElementById(f.id + '-error').textContent; })()",
            Duration::from_secs(5),
        )
        .await;
    assert!(
        refused.as_str().unwrap().contains("scenario-arrivals.csv"),
        "{refused}"
    );
    c.check("simulate-csv-missing", &[]).await;
    let upload = c
        .browser
        .find(Locator::Css("main input[type=file][accept^='.csv']"))
        .await
        .unwrap();
    upload
        .send_keys(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/scenario-arrivals.csv"
        ))
        .await
        .unwrap();
    c.click_text("button", "Run the simulation").await;
    c.until(
        "the report",
        "Array.from(document.querySelectorAll('main h2')).some(h => h.textContent === 'Report')",
        Duration::from_secs(20),
    )
    .await;
    // Players of the CSV (kim arrives first in it) are in the run.
    let report = c
        .js("return document.querySelector('main').textContent;")
        .await;
    assert!(
        report.as_str().unwrap().contains("kim"),
        "the CSV's arrivals are missing"
    );
    c.check("simulate", &[]).await;
    // A scenario with `compare` is answered `{a, b, diff}`, as `simulate
    // --compare` prints it: both configs' figures side by side, then each
    // one's report. Two builds at one MMR: a (no rules) matches them, b
    // (an `equal` rule on the build) keeps them apart, and says which rule.
    let duel = json!({
        "name": "duel-a", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000,
                      "baseTolerance": 5, "expansionMultiplier": 2}
    });
    let mut ruled = duel.clone();
    ruled["name"] = json!("duel-b");
    ruled["attributes"] = json!({"build": {"type": "string", "values": ["1.4", "1.5"]}});
    ruled["rules"] = json!([{"name": "same-build", "type": "equal", "attribute": "build"}]);
    let compared = json!({
        "gameMode": duel, "compare": ruled, "tier": "pro", "seed": 1, "until": 10,
        "arrivals": [
            {"at": 0, "playerId": "old-build", "mmr": 1500, "attributes": {"build": "1.4"}},
            {"at": 0, "playerId": "new-build", "mmr": 1500, "attributes": {"build": "1.5"}}
        ]
    });
    // A fresh page: the CSV uploaded above is not sent again.
    c.nav("Simulate").await;
    c.heading("Simulate").await;
    let area = c.browser.find(Locator::Css("main textarea")).await.unwrap();
    c.browser
        .execute(
            "arguments[0].value = arguments[1];",
            vec![
                serde_json::to_value(&area).unwrap(),
                json!(serde_json::to_string_pretty(&compared).unwrap()),
            ],
        )
        .await
        .unwrap();
    c.click_text("button", "Run the simulation").await;
    c.until(
        "the comparison",
        "Array.from(document.querySelectorAll('main h2')).some(h => h.textContent === 'Comparison')",
        Duration::from_secs(20),
    )
    .await;
    let shown = c.js(COMPARISON).await;
    // Figure: a, b, and b's change relative to a.
    for (figure, row) in [
        ("Matches", ["1", "0", "-100%"]),
        ("Matched players", ["2", "0", "-100%"]),
        ("Still waiting", ["0", "2", "–"]),
        ("Relaxed matches", ["0", "0", "="]),
    ] {
        assert_eq!(shown["diff"][figure], json!(row), "{figure}: {shown}");
    }
    // Each side's own report: its heading names its mode, its cards its
    // figures (matches, matched players, still waiting, unmatched).
    assert_eq!(shown["a"]["heading"], "a: duel-a", "{shown}");
    assert_eq!(shown["a"]["cards"], json!(["1", "2", "0", "0"]), "{shown}");
    assert_eq!(shown["b"]["heading"], "b: duel-b", "{shown}");
    assert_eq!(shown["b"]["cards"], json!(["0", "0", "2", "2"]), "{shown}");
    assert!(
        shown["a"]["text"].as_str().unwrap().contains("old-build"),
        "a's match is missing: {shown}"
    );
    // b's unmatched waited on a rule: the reason names it.
    assert_eq!(
        shown["b"]["reasons"],
        json!([
            "RULE_NOT_MET (rule same-build)",
            "RULE_NOT_MET (rule same-build)"
        ]),
        "{shown}"
    );
    c.check("simulate-compare", &[]).await;
    // The CSV field's hint lists every column docs/simulate.md documents.
    let hint = c
        .js("const l = Array.from(document.querySelectorAll('label')).find(l => l.textContent === 'Arrivals CSV (optional)'); return document.getElementById(l.htmlFor + '-hint').textContent;")
        .await;
    for column in
        "at playerId mmr pingMs partyId partyMembers latencies event attributes".split(' ')
    {
        assert!(hint.as_str().unwrap().contains(column), "{column}: {hint}");
    }

    // A role-queue mode's live view: its Roles table counts the searches
    // waiting now by the roles they listed (three tanks, no damage: no
    // match can seat a damage player).
    let roles = json!({"name": "roles", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 100, "expansionMultiplier": 2},
        "attributes": {"roles": {"type": "stringSet", "values": ["tank", "damage"]}},
        "composition": {"attribute": "roles", "perTeam": {"tank": 1, "damage": 1}}});
    let modes_url = format!("{base}/v1/projects/{project}/game-modes");
    api(&http, Method::POST, modes_url, &key, Some(roles)).await;
    let mut tanks = Vec::new();
    for i in 0..3 {
        let attributes = json!({"mmr": 1500, "roles": ["tank"]});
        tanks.push(
            search_with(
                &http,
                &base,
                &project,
                &key,
                "roles",
                &format!("tank-{i}"),
                attributes,
            )
            .await,
        );
    }
    c.nav("Game modes").await;
    c.heading("Game modes").await;
    c.mode_view("roles", "Live pool").await;
    c.heading("Live pool of roles").await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        poll_all(&http, &base, &tanks).await;
        let row = c
            .js("const s = document.querySelector('section.roles'); if (!s) return null; const r = Array.from(s.querySelectorAll('tbody tr')).find(r => r.cells[0].textContent === 'tank'); return r ? r.cells[1].textContent : null;")
            .await;
        if row == json!("3") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the Roles table never counted three tanks: {row}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    c.check("live-roles", &[]).await;

    // The operator's page.
    c.click("#sign-out").await;
    c.heading("Sign in").await;
    c.fill("API key or operator token", OPERATOR).await;
    c.click("main form button[type=submit]").await;
    c.heading("Projects, keys and tiers").await;
    c.check("operator", &[]).await;
    // A key made here: a missing name is marked at its field; a made key is
    // shown once, with the focus on it.
    c.click_text("button", "Keys").await;
    c.until(
        "the project's keys",
        "document.querySelector('main h2[tabindex]') && document.querySelector('main h2[tabindex]').textContent.startsWith('Keys of')",
        Duration::from_secs(10),
    )
    .await;
    c.click_text("button", "Create key").await;
    c.until(
        "the missing key name marked",
        "(() => { const l = Array.from(document.querySelectorAll('label')).find(l => l.textContent === 'Key name'); return l && document.getElementById(l.htmlFor).getAttribute('aria-invalid') === 'true'; })()",
        Duration::from_secs(10),
    )
    .await;
    c.fill("Key name", "from-the-console").await;
    c.click_text("button", "Create key").await;
    c.until(
        "the new key shown and focused",
        "document.activeElement && document.activeElement.matches('pre.secret') && document.activeElement.textContent.startsWith('mp_sk_')",
        Duration::from_secs(10),
    )
    .await;
    c.check("operator-key", &["422 "]).await;
    // A failure not about a field (the project deleted meanwhile: 404
    // NOT_FOUND, `errors` empty) is said in the form's summary, its detail
    // and code, never as an empty list of problems.
    let shown = c
        .js("return document.querySelector('main h2[tabindex]').textContent.replace('Keys of ', '');")
        .await;
    let shown = shown.as_str().unwrap().to_owned();
    let gone = format!("{base}/v1/projects/{shown}");
    api(&http, Method::DELETE, gone, OPERATOR, None).await;
    c.fill("Key name", "too-late").await;
    c.click_text("button", "Create key").await;
    c.until(
        "the deleted project said in the form's summary",
        "(() => { const s = Array.from(document.querySelectorAll('main [role=alert].error')).find(s => s.textContent); return !!s && s.textContent.includes('no such resource (NOT_FOUND)') && s.textContent.startsWith('1 problem') && document.activeElement === s; })()",
        Duration::from_secs(10),
    )
    .await;
    c.check("operator-key-gone", &["404 "]).await;
    // A tier's limits are named in words, their field names beside them.
    c.click_text("a", "Edit pro").await;
    c.heading("Tier pro").await;
    let labels = c
        .js("return Array.from(document.querySelectorAll('main label')).map(l => l.textContent);")
        .await;
    assert!(
        labels
            .as_array()
            .unwrap()
            .contains(&json!("Cycle duration (seconds), at least")),
        "{labels}"
    );
    c.check("tier", &[]).await;

    let problems = std::mem::take(&mut c.problems);
    c.browser.close().await.unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The Simulate page's comparison as shown: the side-by-side table's rows
/// (`{figure: [a, b, change]}`) and, per side (`a`, `b`), its heading, the
/// values of its cards, the reasons of its unmatched and its text.
const COMPARISON: &str = "const cells = (r) => Array.from(r.cells).map(c => c.textContent); const table = Array.from(document.querySelectorAll('main table')).find(t => t.caption && t.caption.textContent === 'a and b side by side'); const diff = {}; for (const r of table.tBodies[0].rows) { const [f, ...rest] = cells(r); diff[f] = rest; } const side = (name) => { const s = document.querySelector('main section[data-side=' + name + ']'); if (!s) return null; const unmatched = Array.from(s.querySelectorAll('table')).pop(); return {heading: s.querySelector('h2').textContent, cards: Array.from(s.querySelectorAll('.cards .value')).map(v => v.textContent), reasons: Array.from(unmatched.tBodies[0].rows).map(r => r.cells.length > 1 ? r.cells[1].textContent : r.cells[0].textContent), text: s.textContent}; }; return {diff, a: side('a'), b: side('b')};";

/// The cells of the `same-build` row of the live pool's Rules table, or
/// null.
const RULE_ROW: &str = "const row = Array.from(document.querySelectorAll('section.rules tbody tr')).find(r => r.cells[0].textContent === 'same-build'); return row ? Array.from(row.cells).map(c => c.textContent) : null;";

/// The "Searching" chart as drawn: its line's path, split into segments of
/// (x, y) points; the width of one minute; the fill; the value axis'
/// labels; the drawn-to-shown scale and the labels' font size in pixels.
const SEARCHING_CHART: &str = "const fig = Array.from(document.querySelectorAll('figure')).find(f => f.querySelector('figcaption').textContent.startsWith('Searching')); const svg = fig.querySelector('svg'); const path = svg.querySelector('path.line'); const d = path.getAttribute('d'); const segments = d.split('M').filter(Boolean).map(s => s.split('L').map(p => p.split(',').map(Number))); const slots = Number(svg.dataset.slots); const plot = Number(svg.dataset.plotWidth); return {d, segments, step: plot / (slots - 1), fill: getComputedStyle(path).fill, ticks: Array.from(svg.querySelectorAll('text.tick-y')).map(t => t.textContent), scale: svg.getBoundingClientRect().width / svg.viewBox.baseVal.width, fontPx: parseFloat(getComputedStyle(svg.querySelector('text')).fontSize) * svg.getBoundingClientRect().width / svg.viewBox.baseVal.width};";

/// The pressed range button's text-to-background contrast, and the heights
/// of the pressed and an unpressed button.
const RANGE_BUTTONS: &str = "const lum = (c) => { const [r, g, b] = c.match(/[\\d.]+/g).slice(0, 3).map(Number).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; }; const on = document.querySelector('.range [aria-pressed=true]'); const off = document.querySelector('.range [aria-pressed=false]'); const s = getComputedStyle(on); const [a, b] = [lum(s.color), lum(s.backgroundColor)].sort((x, y) => y - x); return {contrast: (a + 0.05) / (b + 0.05), heights: [on.getBoundingClientRect().height, off.getBoundingClientRect().height]};";

/// An API call with `key` (and `body` as JSON) that must succeed, answered
/// as JSON.
async fn api(
    http: &reqwest::Client,
    method: Method,
    url: String,
    key: &str,
    body: Option<Value>,
) -> Value {
    let mut request = http.request(method, url).bearer_auth(key);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let answer = request.send().await.unwrap();
    let status = answer.status();
    let text = answer.text().await.unwrap();
    assert!(status.is_success(), "{status}: {text}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}
