//! The console in a real browser: Debian's Chromium driven through
//! chromedriver (WebDriver, `fantoccini`) against `matchplane dev`. Signs
//! in with an API key, creates a game mode with an error then fixes it,
//! watches the live pool fill from searches this test starts and a match
//! appear, opens its deliveries and redelivers, runs a simulation, and on
//! each page checks that every form field is labelled, that the browser
//! logged no error and that no request failed. Screenshots of every page at
//! 1280 and 390 pixels wide go to `console-screenshots/` (kept out of git).
//!
//! Chromium and chromedriver must be installed (`scripts/install-chromium`,
//! which CI runs): without them the test fails, it never skips.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};
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

/// Kills a child process when dropped (pass or fail).
/// The last 60 lines of the file at `path` (for a failure's message).
fn log_tail(path: &std::path::Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(60)..].join("\n")
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
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

/// A webhook receiver on loopback that answers 200.
async fn receiver() -> (String, Arc<Mutex<usize>>) {
    let count = Arc::new(Mutex::new(0));
    let seen = Arc::clone(&count);
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let seen = Arc::clone(&seen);
            async move {
                *seen.lock().unwrap() += 1;
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/hook"), count)
}

struct Console {
    browser: Client,
    base: String,
    shots: PathBuf,
    problems: Vec<String>,
}

impl Console {
    async fn go(&self, hash: &str) {
        self.browser
            .goto(&format!("{}/console/{hash}", self.base))
            .await
            .unwrap();
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

    /// Every form field labelled, the browser's console free of errors, no
    /// request failed (but `allowed` answers); then a screenshot at both
    /// widths.
    async fn check(&mut self, name: &str, allowed: &[&str]) {
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
            tokio::time::sleep(Duration::from_millis(150)).await;
            let png = self.browser.screenshot().await.unwrap();
            std::fs::write(self.shots.join(format!("{name}-{width}.png")), png).unwrap();
        }
        self.browser.set_window_size(1280, 900).await.unwrap();
    }
}

/// Starts a search for `player` at `mmr`; returns the ticket's token.
async fn search(
    http: &reqwest::Client,
    base: &str,
    project: &str,
    key: &str,
    player: &str,
    mmr: f64,
) -> (String, String) {
    let ticket: Value = http
        .post(format!("{base}/v1/projects/{project}/tickets"))
        .bearer_auth(key)
        .json(&json!({"gameMode": "duel", "playerId": player, "attributes": {"mmr": mmr}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
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
    let _driver = Killed(
        Command::new(driver)
            .arg(format!("--port={driver_port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_http(&format!("http://127.0.0.1:{driver_port}/status")).await;

    let http = reqwest::Client::new();
    let project: Value = http
        .post(format!("{base}/v1/projects"))
        .bearer_auth(OPERATOR)
        .json(&json!({"name": "console", "tier": "pro"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let project = project["id"].as_str().unwrap().to_owned();
    let key: Value = http
        .post(format!("{base}/v1/projects/{project}/keys"))
        .bearer_auth(OPERATOR)
        .json(&json!({"name": "console"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let key = key["key"].as_str().unwrap().to_owned();
    let (hook, hooks) = receiver().await;

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

    // Sign in with the project's key.
    c.go("").await;
    c.heading("Sign in").await;
    c.check("sign-in", &[]).await;
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

    // A mode with an error (tolerance below the tier's floor), then fixed.
    c.go("#/modes/new").await;
    c.heading("New game mode").await;
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
    c.check("mode-edit", &[]).await;

    // A second version, so the history has something to compare.
    c.fill("Ticket time to live (seconds)", "900").await;
    c.click("main form button[type=submit]").await;
    c.until(
        "version 2 saved",
        "document.getElementById('status').textContent.includes('version 2')",
        Duration::from_secs(10),
    )
    .await;
    c.go("#/modes/duel/versions").await;
    c.heading("Version history of duel").await;
    c.until(
        "a diff line",
        "document.querySelector('.diff .add') && document.querySelector('.diff .add').textContent.includes('900')",
        Duration::from_secs(5),
    )
    .await;
    c.check("mode-versions", &[]).await;

    // The live pool fills from searches started here, far apart in MMR.
    c.go("#/modes/duel/live").await;
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
    // Two close players make a match.
    // (Kept in the list polled below, so a slow machine's late cycle
    // finds them still searching.)
    tickets.push(search(&http, &base, &project, &key, "near-a", 1500.0).await);
    tickets.push(search(&http, &base, &project, &key, "near-b", 1510.0).await);
    // REST searches end when unpolled: keep the far ones alive meanwhile.
    poll_all(&http, &base, &tickets).await;

    c.go("#/matches").await;
    c.heading("Matches").await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut last_polls: Vec<String> = Vec::new();
    let mut refreshes = 0u32;
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
        // A new hash each time: the console re-renders on `hashchange`,
        // which the same hash twice does not fire.
        refreshes += 1;
        c.go(&format!("#/matches?r={refreshes}")).await;
        c.heading("Matches").await;
    }
    c.check("matches", &[]).await;
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
        "Array.from(document.querySelectorAll('main td')).some(td => td.textContent === 'succeeded') || (location.reload(), false)",
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

    c.go("#/modes/duel/charts").await;
    c.heading("Charts of duel").await;
    c.until(
        "a line in the charts",
        "document.querySelector('figure svg path, figure svg circle')",
        Duration::from_secs(5),
    )
    .await;
    c.check("charts", &[]).await;
    c.go("#/modes/duel/leaderboard").await;
    c.heading("Leaderboard of duel").await;
    c.check("leaderboard", &[]).await;

    // A simulation of the repository's example scenario, arrivals inline.
    let mut scenario: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/scenario.json"
        ))
        .unwrap(),
    )
    .unwrap();
    scenario.as_object_mut().unwrap().remove("arrivalsCsv");
    c.go("#/simulate").await;
    c.heading("Simulate").await;
    let area = c.browser.find(Locator::Css("main textarea")).await.unwrap();
    c.browser
        .execute(
            "arguments[0].value = arguments[1];",
            vec![
                serde_json::to_value(&area).unwrap(),
                json!(scenario.to_string()),
            ],
        )
        .await
        .unwrap();
    c.click_text("button", "Run the simulation").await;
    c.until(
        "the report",
        "Array.from(document.querySelectorAll('main h2')).some(h => h.textContent === 'Report')",
        Duration::from_secs(20),
    )
    .await;
    c.check("simulate", &[]).await;

    // The operator's page.
    c.click("#sign-out").await;
    c.heading("Sign in").await;
    c.fill("API key or operator token", OPERATOR).await;
    c.click("main form button[type=submit]").await;
    c.heading("Projects, keys and tiers").await;
    c.check("operator", &[]).await;

    let problems = std::mem::take(&mut c.problems);
    c.browser.close().await.unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(problems.is_empty(), "{problems:#?}");
}
