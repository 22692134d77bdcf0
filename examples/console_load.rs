//! The console's live view of a mode with 100 000 searching, measured in a
//! real browser against release `matchplane api` and `matchplane worker`
//! processes on PostgreSQL and Redis (issue 20's goals): how long a page
//! load takes to show the live figures, and what one viewer's refreshes
//! cost the API process's CPU against an idle baseline of the same process
//! in the same run.
//!
//! ```text
//! scripts/console-load [LOADS] [WATCH_SECONDS]
//! ```
//! (the script builds this example and `matchplane` in release, makes a
//! fresh database and runs it). By hand:
//! `DATABASE_URL=postgres://… REDIS_URL=redis://… target/release/examples/console_load [LOADS] [WATCH_SECONDS] [SEARCHES]`.
//!
//! It migrates the database with `matchplane migrate`, starts `matchplane
//! api` and `matchplane worker` (the binary beside `examples/`, or
//! `MATCHPLANE_BIN`) under a fresh Redis key prefix, creates a tier without
//! limits in the way, a project, a key and a `[5, 5]` MMR mode whose window
//! never widens past 0 points (so its pool holds still: nobody matches,
//! every cycle sums up all SEARCHES, default 100 000), and puts SEARCHES
//! solo searches straight into the mode's Redis pool (ratings like a ranked
//! ladder, pings 20-150 ms). Once a cycle has summed them up it signs in to
//! the console in headless Chromium (chromedriver, as the browser test) and:
//!
//! 1. loads the live view LOADS times (default 20), each a full page load
//!    from `about:blank`, and takes the time from navigation start to the
//!    live figures being in the page (searching = SEARCHES and the three
//!    charts drawn, seen by a `MutationObserver` the browser runs before
//!    the page's own script) and to the next frame after that;
//! 2. reads the API process's CPU time (utime + stime, `/proc/PID/stat`)
//!    over WATCH_SECONDS (default 60) idle (the tab on `about:blank`), over
//!    WATCH_SECONDS with the tab on the live view, and idle again, and
//!    prints the viewer's cost as a share of one core and of the machine;
//! 3. lists the requests the page made per refresh with the browser's time
//!    to first byte, and times each of them 100 more times outside the
//!    browser for the API's wall and CPU time per call.
//!
//! The Redis keys of its prefix are deleted at the end; the processes are
//! stopped whatever happens.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder, Locator};
use futures::StreamExt;
use matchplane_store::pool::{ModeKey, PoolStore, RedisPoolConfig, RedisPoolStore, Search};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const OPERATOR: &str = "console-load-operator";
const MODE: &str = "ranked";

/// Kills a child process when dropped (pass or fail).
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Sends a Chrome DevTools command through chromedriver
/// (`goog/cdp/execute`).
#[derive(Debug)]
struct Cdp(Value);

impl WebDriverCompatibleCommand for Cdp {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/goog/cdp/execute",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(self.0.to_string()))
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| PathBuf::from(dir).join(name))
        .find(|p| p.is_file())
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// User plus system CPU seconds of process `pid`, from `/proc/PID/stat`.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15 (1-based), in clock ticks (100 Hz).
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

/// The 1-minute load average, from `/proc/loadavg`.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The `q`-quantile (nearest rank) of sorted `values`.
fn pct(values: &[f64], q: f64) -> f64 {
    let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len());
    values[rank - 1]
}

fn sorted(mut values: Vec<f64>) -> Vec<f64> {
    values.sort_by(f64::total_cmp);
    values
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

async fn call(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    auth: &str,
    body: Value,
) -> Value {
    let response = http
        .request(method, url)
        .bearer_auth(auth)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    assert!(status.is_success(), "{url}: {status}: {text}");
    serde_json::from_str(&text).unwrap()
}

fn spawn(bin: &Path, args: &[&str], log: &Path) -> Killed {
    Killed(
        Command::new(bin)
            .args(args)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", bin.display())),
    )
}

/// Runs in every new document before the page's own script: records when
/// the live view first holds `searching = WANT` with its three figures drawn
/// (`shown`) and the next frame after it (`painted`), in `performance.now()`
/// milliseconds from navigation start.
fn probe_script(want: usize) -> String {
    format!(
        r#"(() => {{
  if (!location.pathname.startsWith('/console/')) return;
  const probe = {{ shown: null, painted: null }};
  window.__consoleLoad = probe;
  const ready = () => {{
    const live = document.querySelector('[data-searching]');
    return !!live && live.dataset.searching === '{want}' && live.querySelectorAll('figure').length >= 3;
  }};
  const observer = new MutationObserver(() => {{
    if (probe.shown !== null || !ready()) return;
    probe.shown = performance.now();
    observer.disconnect();
    requestAnimationFrame(() => setTimeout(() => {{ probe.painted = performance.now(); }}, 0));
  }});
  observer.observe(document, {{ subtree: true, childList: true, attributes: true, attributeFilter: ['data-searching'] }});
}})();"#
    )
}

/// The page's resource timings: `[path, startTime, requestStart,
/// responseStart, responseEnd, transferSize]`.
const RESOURCES: &str = "return performance.getEntriesByType('resource').map(e => [new URL(e.name).pathname, e.startTime, e.requestStart, e.responseStart, e.responseEnd, e.transferSize]);";

struct Resource {
    path: String,
    start: f64,
    /// Request sent to first byte of the answer (ms).
    ttfb: f64,
    end: f64,
    transfer: f64,
}

fn resources(value: &Value) -> Vec<Resource> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| Resource {
            path: e[0].as_str().unwrap_or_default().to_owned(),
            start: e[1].as_f64().unwrap_or(0.0),
            ttfb: e[3].as_f64().unwrap_or(0.0) - e[2].as_f64().unwrap_or(0.0),
            end: e[4].as_f64().unwrap_or(0.0),
            transfer: e[5].as_f64().unwrap_or(0.0),
        })
        .collect()
}

/// Shortens `/v1/projects/prj_…/game-modes/ranked/pool` to `…/pool`.
fn short(path: &str) -> String {
    match path.find("/game-modes/") {
        Some(i) => {
            let rest = &path[i + "/game-modes/".len()..];
            match rest.find('/') {
                Some(j) => format!("…{}", &rest[j..]),
                None => "…/game-modes/{name}".to_owned(),
            }
        }
        None => path.to_owned(),
    }
}

async fn fill(browser: &Client, label: &str, text: &str) {
    let id = browser
        .execute(
            "const l = Array.from(document.querySelectorAll('label')).find(l => l.textContent.trim() === arguments[0]); return l ? l.htmlFor : null;",
            vec![json!(label)],
        )
        .await
        .unwrap();
    let id = id
        .as_str()
        .unwrap_or_else(|| panic!("no field labelled {label:?}"));
    let field = browser.find(Locator::Id(id)).await.unwrap();
    field.clear().await.unwrap();
    field.send_keys(text).await.unwrap();
}

/// Waits until the JS expression `script` is truthy; returns its value.
async fn until(browser: &Client, what: &str, script: &str, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let value = browser
            .execute(&format!("return ({script});"), vec![])
            .await
            .unwrap();
        if !matches!(value, Value::Null | Value::Bool(false)) {
            return value;
        }
        assert!(Instant::now() < deadline, "waited {within:?} for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let loads: usize = args.get(1).map_or(20, |a| a.parse().unwrap());
    let watch = Duration::from_secs(args.get(2).map_or(60, |a| a.parse().unwrap()));
    let searches: usize = args.get(3).map_or(100_000, |a| a.parse().unwrap());
    let database = std::env::var("DATABASE_URL").expect("DATABASE_URL");
    let redis = std::env::var("REDIS_URL").expect("REDIS_URL");
    let bin = std::env::var_os("MATCHPLANE_BIN").map_or_else(
        || {
            let exe = std::env::current_exe().unwrap();
            exe.parent().unwrap().parent().unwrap().join("matchplane")
        },
        PathBuf::from,
    );
    let (Some(chromium), Some(driver)) = (which("chromium"), which("chromedriver")) else {
        panic!("Chromium and chromedriver are needed: run scripts/install-chromium");
    };
    let dir = std::env::temp_dir().join(format!("mp-console-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prefix = format!("mpcl{}", std::process::id());
    println!(
        "machine: {} cores, load average {} at the start",
        cores(),
        load_average()
    );

    let migrated = Command::new(&bin)
        .args(["migrate", "--database-url", &database])
        .output()
        .unwrap();
    assert!(
        migrated.status.success(),
        "matchplane migrate: {}",
        String::from_utf8_lossy(&migrated.stderr)
    );
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let listen = format!("127.0.0.1:{port}");
    let common = [
        "--database-url",
        database.as_str(),
        "--redis-url",
        redis.as_str(),
        "--redis-prefix",
        prefix.as_str(),
    ];
    let api_args: Vec<&str> = ["api", "--listen", &listen, "--operator-token", OPERATOR]
        .into_iter()
        .chain(common)
        .collect();
    let api = spawn(&bin, &api_args, &dir.join("api.log"));
    let worker_args: Vec<&str> = ["worker"].into_iter().chain(common).collect();
    let worker = spawn(&bin, &worker_args, &dir.join("worker.log"));
    let (api_pid, worker_pid) = (api.0.id(), worker.0.id());
    wait_http(&format!("{base}/healthz")).await;

    let http = reqwest::Client::new();
    call(
        &http,
        reqwest::Method::PUT,
        &format!("{base}/v1/tiers/console-load"),
        OPERATOR,
        json!({"minCycleDurationSeconds": 0.1, "minBaseTolerance": 0,
               "minExpansionMultiplier": 1, "maxMatchSize": 200, "maxGameModes": 1000,
               "maxConcurrentSearches": 10_000_000, "requestsPerSecond": 10_000_000,
               "maxPendingTickets": 1_000_000_000_u64}),
    )
    .await;
    let project = call(
        &http,
        reqwest::Method::POST,
        &format!("{base}/v1/projects"),
        OPERATOR,
        json!({"name": "console-load", "tier": "console-load"}),
    )
    .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let key = call(
        &http,
        reqwest::Method::POST,
        &format!("{base}/v1/projects/{project}/keys"),
        OPERATOR,
        json!({"name": "console-load"}),
    )
    .await["key"]
        .as_str()
        .unwrap()
        .to_owned();
    // A window of 0 points that never widens: no two ratings are equal, so
    // nobody matches and every cycle sees the whole pool.
    call(
        &http,
        reqwest::Method::POST,
        &format!("{base}/v1/projects/{project}/game-modes"),
        &key,
        json!({"name": MODE, "enabled": true, "matchShape": [5, 5],
               "matchmakingCycleDurationSeconds": 2, "ticketTtlSeconds": 3600,
               "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000,
                             "baseTolerance": 0, "expansionMultiplier": 1}}),
    )
    .await;

    // The pool: ratings around 1500 (sum of uniforms), pings 20-150 ms,
    // waits 0-60 s, alive for three hours.
    let mut config = RedisPoolConfig::new(redis.clone());
    config.prefix = prefix.clone();
    config.response_timeout = Duration::from_secs(60);
    let pool: Arc<dyn PoolStore> = Arc::new(RedisPoolStore::connect(config).await.unwrap());
    let mode = ModeKey::new(project.clone(), MODE);
    let now = unix_now();
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let all: Vec<Search> = (0..searches)
        .map(|i| {
            let mmr = 300.0 + (0..6).map(|_| next()).sum::<f64>() * 400.0;
            let mut search = Search::solo(
                format!("tkt_{i:07}"),
                format!("player-{i}"),
                mmr.clamp(0.0, 3000.0),
                now - next() * 60.0,
            );
            search.ping_ms = Some(20.0 + next() * 130.0);
            search
        })
        .collect();
    let started = Instant::now();
    futures::stream::iter(all.iter())
        .map(|s| {
            let pool = Arc::clone(&pool);
            let mode = mode.clone();
            async move {
                pool.add_search(&mode, s, now + 3.0 * 3600.0, None)
                    .await
                    .unwrap()
            }
        })
        .buffer_unordered(256)
        .collect::<Vec<()>>()
        .await;
    drop(all);
    println!(
        "pool: {searches} searches added in {:.1?}",
        started.elapsed()
    );
    let pool_url = format!("{base}/v1/projects/{project}/game-modes/{MODE}/pool");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let view: Value = http
            .get(&pool_url)
            .bearer_auth(&key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if view["searching"].as_u64() == Some(searches as u64) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no cycle summed up the pool within 120 s: {view}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    println!("worker: a cycle has summed up the pool");

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
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({"binary": chromium, "args": ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,900"]}),
    );
    let browser = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{driver_port}"))
        .await
        .expect("chromedriver starts a Chromium session");

    // Sign in as a user would; the key stays in the tab's session storage.
    browser.goto(&format!("{base}/console/")).await.unwrap();
    until(
        &browser,
        "the sign-in form",
        "document.querySelector('main form')",
        Duration::from_secs(20),
    )
    .await;
    fill(&browser, "Project id", &project).await;
    fill(&browser, "API key or operator token", &key).await;
    browser
        .find(Locator::Css("main form button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until(
        &browser,
        "the modes page",
        "document.querySelector('main h1') && document.querySelector('main h1').textContent === 'Game modes'",
        Duration::from_secs(20),
    )
    .await;
    browser
        .issue_cmd(Cdp(json!({"cmd": "Page.addScriptToEvaluateOnNewDocument",
            "params": {"source": probe_script(searches)}})))
        .await
        .unwrap();

    // 1. Page loads.
    let live_url = format!("{base}/console/#/modes/{MODE}/live");
    let mut shown = Vec::new();
    let mut painted = Vec::new();
    let mut first_load: Vec<Resource> = Vec::new();
    println!(
        "\n1. {loads} loads of the live view (load average {})",
        load_average()
    );
    println!("   load  in the page  next frame  (ms from navigation start)");
    for i in 0..loads {
        browser.goto("about:blank").await.unwrap();
        browser.goto(&live_url).await.unwrap();
        let probe = until(
            &browser,
            "the live figures",
            "window.__consoleLoad && window.__consoleLoad.painted !== null && window.__consoleLoad",
            Duration::from_secs(30),
        )
        .await;
        let (s, p) = (
            probe["shown"].as_f64().unwrap(),
            probe["painted"].as_f64().unwrap(),
        );
        println!("   {:>4}  {s:>11.0}  {p:>10.0}", i + 1);
        shown.push(s);
        painted.push(p);
        if i == 0 {
            first_load = resources(&browser.execute(RESOURCES, vec![]).await.unwrap());
        }
    }
    let (shown, painted) = (sorted(shown), sorted(painted));
    println!(
        "   in the page: p50 {:.0} ms, p90 {:.0} ms, max {:.0} ms; next frame: p50 {:.0} ms, p90 {:.0} ms, max {:.0} ms",
        pct(&shown, 0.5),
        pct(&shown, 0.9),
        shown[shown.len() - 1],
        pct(&painted, 0.5),
        pct(&painted, 0.9),
        painted[painted.len() - 1]
    );
    println!("   the first load's requests (ms from navigation start):");
    for r in &first_load {
        println!(
            "     {:<28} sent {:>5.0}  first byte after {:>5.1}  done {:>5.0}  {:>6} bytes",
            short(&r.path),
            r.start,
            r.ttfb,
            r.end,
            r.transfer
        );
    }

    // 2. CPU of the API: idle, one viewer, idle.
    let secs = watch.as_secs_f64();
    println!("\n2. the API's CPU over {secs:.0} s windows (utime+stime of pid {api_pid})");
    let measure = |label: &'static str| {
        let (api0, worker0) = (cpu_seconds(api_pid), cpu_seconds(worker_pid));
        async move {
            tokio::time::sleep(watch).await;
            let api = cpu_seconds(api_pid) - api0;
            let worker = cpu_seconds(worker_pid) - worker0;
            println!(
                "   {label:<12} API {api:>6.2} s CPU ({:>5.2} % of a core)   worker {worker:>6.1} s   load average {}",
                api / secs * 100.0,
                load_average()
            );
            api
        }
    };
    browser.goto("about:blank").await.unwrap();
    let idle_before = measure("idle").await;
    browser.goto(&live_url).await.unwrap();
    until(
        &browser,
        "the live figures",
        "window.__consoleLoad && window.__consoleLoad.painted !== null",
        Duration::from_secs(30),
    )
    .await;
    browser
        .execute("performance.clearResourceTimings();", vec![])
        .await
        .unwrap();
    let viewer = measure("one viewer").await;
    let watched = resources(&browser.execute(RESOURCES, vec![]).await.unwrap());
    browser.goto("about:blank").await.unwrap();
    let idle_after = measure("idle again").await;
    let idle = (idle_before + idle_after) / 2.0;
    let cost = (viewer - idle).max(0.0);
    println!(
        "   the viewer's cost: {cost:.2} s CPU in {secs:.0} s = {:.2} % of one core, {:.2} % of the machine's {} cores",
        cost / secs * 100.0,
        cost / secs / cores() as f64 * 100.0,
        cores()
    );

    // 3. The requests of each refresh.
    let mut paths: Vec<String> = watched.iter().map(|r| short(&r.path)).collect();
    paths.sort();
    paths.dedup();
    println!(
        "\n3. requests the live view made in {secs:.0} s with one viewer ({} in all)",
        watched.len()
    );
    for path in &paths {
        let ttfb = sorted(
            watched
                .iter()
                .filter(|r| &short(&r.path) == path)
                .map(|r| r.ttfb)
                .collect(),
        );
        let bytes = watched
            .iter()
            .find(|r| &short(&r.path) == path)
            .map_or(0.0, |r| r.transfer);
        println!(
            "   {path:<22} {:>3} calls, first byte after p50 {:.1} ms, p90 {:.1} ms, {bytes:.0} bytes",
            ttfb.len(),
            pct(&ttfb, 0.5),
            pct(&ttfb, 0.9)
        );
    }
    let since = (chrono::Utc::now() - chrono::TimeDelta::seconds(120))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let page_calls = [
        ("…/pool", pool_url.clone()),
        (
            "…/stats/history",
            format!(
                "{base}/v1/projects/{project}/game-modes/{MODE}/stats/history?bucketSeconds=60&from={since}"
            ),
        ),
    ];
    println!("   the same calls, 100 each from this program (keep-alive, one at a time):");
    for (name, url) in &page_calls {
        let mut walls = Vec::with_capacity(100);
        let cpu0 = cpu_seconds(api_pid);
        for _ in 0..100 {
            let t0 = Instant::now();
            let response = http.get(url).bearer_auth(&key).send().await.unwrap();
            assert!(
                response.status().is_success(),
                "{url}: {}",
                response.status()
            );
            response.bytes().await.unwrap();
            walls.push(t0.elapsed().as_secs_f64() * 1e3);
        }
        let cpu = cpu_seconds(api_pid) - cpu0;
        let walls = sorted(walls);
        println!(
            "   {name:<22} wall p50 {:.1} ms, p90 {:.1} ms; API CPU {:.2} ms per call",
            pct(&walls, 0.5),
            pct(&walls, 0.9),
            cpu / 100.0 * 1e3
        );
    }

    println!(
        "\nsummary: live view of {searches} shown after p50 {:.0} ms, p90 {:.0} ms (next frame p50 {:.0}, p90 {:.0}); \
         one viewer costs the API {:.2} % of a core ({:.2} % of the machine); load average at the end {}",
        pct(&shown, 0.5),
        pct(&shown, 0.9),
        pct(&painted, 0.5),
        pct(&painted, 0.9),
        cost / secs * 100.0,
        cost / secs / cores() as f64 * 100.0,
        load_average()
    );

    browser.close().await.ok();
    drop(api);
    drop(worker);
    matchplane_store::pool::redis::delete_prefix_blocking(&redis, &prefix).unwrap();
    std::fs::remove_dir_all(&dir).ok();
}
