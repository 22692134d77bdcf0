//! matchplane on a real Redis Cluster, end to end (docs/redis-cluster.md; issue 23,
//! item 1): the real binary as `api` and two `worker` processes on the
//! three-master cluster of `scripts/redis-cluster`
//! (`MATCHPLANE_TEST_REDIS_CLUSTER_URL`) and a throwaway PostgreSQL
//! database, a mode and its webhook made over REST, players searching over
//! REST and WebSocket, each `match.made` verified by a local receiver.
//!
//! 1. A match is made and webhooked on the cluster.
//! 2. The slot holding the mode's keys moves to another master and back
//!    (`MOVED`/`ASK`/`TRYAGAIN` for the clients) while searches arrive and
//!    cycles run: every search is matched, every match stored and
//!    delivered once.
//! 3. That master is killed (SIGKILL) and started again with its append-only
//!    file during the cycles: the API answers again (a `503`
//!    with `Retry-After` meanwhile), the workers resume, a search from before
//!    the restart is matched with one from after it, nothing is doubled.
//!
//! Without `MATCHPLANE_TEST_REDIS_CLUSTER_URL` each test fails (`scripts/test`
//! starts a throwaway cluster and sets it). 2 and 3 run in one test,
//! in order, under the exclusive cluster lock, and leave the slot where it
//! was and the cluster `ok`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::cluster::{self, ClusterLock};
use support::{players_of, ws_search, Answer, Deployment, LONG_REST_POLL};

/// Every `match.made` the receiver got, checked against what the players
/// were told (`player → matchId`): each match delivered exactly once under
/// one `webhook-id`, its signature verified, its players those told of it,
/// no player in two matches, and the database holding exactly these matches.
async fn assert_each_match_once(d: &Deployment, told: &BTreeMap<String, String>) {
    let ids: BTreeSet<&String> = told.values().collect();
    for id in &ids {
        let hooks = d.hooks_of(id, 1, Duration::from_secs(30)).await;
        assert_eq!(
            hooks.len(),
            1,
            "match {id} delivered {} times: {hooks:?}; logs in {}",
            hooks.len(),
            d.dir.display()
        );
        let hook = &hooks[0];
        assert!(hook.verified, "signature of {id} did not verify: {hook:?}");
        assert_eq!(hook.body["type"], "match.made", "{hook:?}");
        let mut players = players_of(&hook.body);
        players.sort();
        let mut expected: Vec<String> = told
            .iter()
            .filter(|(_, m)| m == id)
            .map(|(p, _)| p.clone())
            .collect();
        expected.sort();
        assert_eq!(players, expected, "the players of {id}");
    }
    let got = d.receiver.got();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for hook in &got {
        let id = hook.body["matchId"].as_str().unwrap_or("").to_owned();
        assert!(
            ids.contains(&id),
            "a webhook for a match nobody was told of: {hook:?}"
        );
        for p in players_of(&hook.body) {
            let before = seen.insert(p.clone(), id.clone());
            assert!(
                before.as_ref().is_none_or(|b| b == &id),
                "{p} in two matches: {before:?} and {id}"
            );
        }
    }
    let ids_sent: BTreeSet<&str> = got.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(ids_sent.len(), got.len(), "a webhook-id sent twice");
    assert_eq!(
        d.stored_matches().await,
        i64::try_from(ids.len()).unwrap(),
        "the database's matches"
    );
}

/// The match id in a REST status or a WebSocket `matched` message.
fn match_id(v: &Value) -> Option<String> {
    v["match"]["matchId"].as_str().map(str::to_owned)
}

/// Asserts that `player`'s search ended matched (`ended`: a REST status or
/// a WebSocket message, `field` its `status` or `type`) and records the
/// match in `told`.
fn tell(
    d: &Deployment,
    told: &mut BTreeMap<String, String>,
    player: &str,
    ended: &Value,
    field: &str,
) {
    assert_eq!(
        ended[field],
        "matched",
        "{player}: {ended}; logs in {}",
        d.dir.display()
    );
    told.insert(player.to_owned(), match_id(ended).unwrap());
}

/// Waits for each REST search `(player, ticket, token)` to end (at most
/// 30 s each) and [`tell`]s its match.
async fn tell_rest(
    d: &Deployment,
    told: &mut BTreeMap<String, String>,
    searches: &[(String, String, String)],
) {
    for (player, ticket, token) in searches {
        let s = d.until_ended(ticket, token, Duration::from_secs(30)).await;
        tell(d, told, player, &s, "status");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_match_is_made_and_webhooked_on_the_cluster_over_rest_and_websocket() {
    let url = cluster::cluster_url();
    let _lock = ClusterLock::shared().await;
    let mut d = Deployment::start("clmatch", &url, 2, &[LONG_REST_POLL]).await;
    d.mode(
        json!({"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
                  "algorithm": {"type": "fifo"}}),
    )
    .await;

    // Two players over REST, two over WebSocket, in turns.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut rest = Vec::new();
    let mut sockets = Vec::new();
    for round in 0..2 {
        let player = format!("rest-{round}");
        let (ticket, token) = d.ticket("duel", &player, 1500.0).await;
        let a = d.rest_search(&token).await;
        assert_eq!(a.status, 202, "{a:?}");
        rest.push((player, ticket, token));
        let player = format!("ws-{round}");
        let (_, token) = d.ticket("duel", &player, 1500.0).await;
        sockets.push((
            player,
            tokio::spawn(ws_search(d.api.base.clone(), token, deadline)),
        ));
    }
    let mut told = BTreeMap::new();
    tell_rest(&d, &mut told, &rest).await;
    for (player, task) in sockets {
        tell(&d, &mut told, &player, &task.await.unwrap(), "type");
    }
    assert_eq!(told.values().collect::<BTreeSet<_>>().len(), 2, "{told:?}");
    assert_each_match_once(&d, &told).await;
    for p in &mut d.procs {
        assert!(
            p.0.try_wait().unwrap().is_none(),
            "a process exited; logs in {}",
            d.dir.display()
        );
    }
    // Each process checked at start that the cluster's masters persist
    // their data (INFO answered by every master).
    for log in ["api.log", "worker-1.log", "worker-2.log"] {
        let text = std::fs::read_to_string(d.dir.join(log)).unwrap();
        assert!(
            !text.contains("could not tell whether Redis persists"),
            "{log}: the persistence check failed on the cluster"
        );
    }
}

/// Searches started by [`Traffic`]: `(player, ticket, token)`.
type Started = Arc<Mutex<Vec<(String, String, String)>>>;

/// Pairs of players (MMR 2000, so each pair matches at once and nobody
/// else) searching over REST, one pair after another until stopped. A
/// request answered `503` with `Retry-After` is tried again (counted);
/// any other failure fails the test.
struct Traffic {
    stop: Arc<AtomicBool>,
    pairs: Arc<AtomicUsize>,
    unavailable: Arc<AtomicUsize>,
    started: Started,
    task: tokio::task::JoinHandle<()>,
}

/// `call` until it answers other than `503` (at most 30 s); a `503` must
/// carry `Retry-After`.
async fn retrying<F, Fut>(unavailable: &AtomicUsize, mut call: F) -> Answer
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Answer>,
{
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let a = call().await;
        if a.status != 503 || Instant::now() > deadline {
            return a;
        }
        assert!(a.retry_after.is_some(), "503 without Retry-After: {a:?}");
        unavailable.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Makes a ticket of `player` and starts its REST search, retrying `503`s.
async fn search(
    d: &Deployment,
    unavailable: &AtomicUsize,
    player: &str,
    mmr: f64,
) -> (String, String) {
    let path = format!("/v1/projects/{}/tickets", d.project);
    let body = json!({"gameMode": "duel", "playerId": player, "attributes": {"mmr": mmr}});
    let t = retrying(unavailable, || {
        d.api
            .send(reqwest::Method::POST, &path, &d.bearer, Some(body.clone()))
    })
    .await;
    assert_eq!(t.status, 201, "ticket of {player}: {t:?}");
    let token = t.body["token"].as_str().unwrap().to_owned();
    let a = retrying(unavailable, || d.rest_search(&token)).await;
    assert_eq!(a.status, 202, "search of {player}: {a:?}");
    (t.body["ticketId"].as_str().unwrap().to_owned(), token)
}

impl Traffic {
    fn start(d: Arc<Deployment>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let pairs = Arc::new(AtomicUsize::new(0));
        let unavailable = Arc::new(AtomicUsize::new(0));
        let started: Started = Arc::default();
        let task = tokio::spawn({
            let (stop, pairs, unavailable, started) = (
                stop.clone(),
                pairs.clone(),
                unavailable.clone(),
                started.clone(),
            );
            async move {
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) {
                    for side in ["a", "b"] {
                        let player = format!("pair-{n}-{side}");
                        let (ticket, token) = search(&d, &unavailable, &player, 2000.0).await;
                        started.lock().unwrap().push((player, ticket, token));
                    }
                    n += 1;
                    pairs.store(n, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        });
        Self {
            stop,
            pairs,
            unavailable,
            started,
            task,
        }
    }

    /// Waits (at most 30 s) until `more` pairs beyond the current count
    /// have started searching.
    async fn until_more(&self, more: usize) {
        let target = self.pairs.load(Ordering::SeqCst) + more;
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.pairs.load(Ordering::SeqCst) < target {
            assert!(!self.task.is_finished(), "the traffic task ended early");
            assert!(Instant::now() < deadline, "traffic stalled");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Stops, and returns every search started and how many `503`s met.
    async fn stop(self) -> (Vec<(String, String, String)>, usize) {
        self.stop.store(true, Ordering::SeqCst);
        self.task.await.unwrap();
        let started = self.started.lock().unwrap().clone();
        (started, self.unavailable.load(Ordering::SeqCst))
    }
}

/// Moves `slot` from `from` to `to` while `traffic` runs: the first batch
/// of keys goes over, a pair starts searching while the slot is half moved
/// (its requests reach the API before the rest of the keys move: a `503`
/// meanwhile is retried), the rest goes over, and more pairs search after.
/// Returns the pair started in the middle.
async fn move_under_traffic(
    d: &Arc<Deployment>,
    seed: &str,
    slot: u16,
    from: &cluster::Node,
    to: &cluster::Node,
    traffic: &Traffic,
) -> Vec<(String, String, String)> {
    let (moving, first) = tokio::task::block_in_place(|| {
        let mut moving = cluster::SlotMove::begin(seed, slot, from, to);
        let first = moving.step(3).unwrap();
        (moving, first)
    });
    assert!(first > 0, "slot {slot} held no key");
    let unavailable = Arc::new(AtomicUsize::new(0));
    let names = (from.port, to.port);
    let middle = tokio::spawn({
        let (d, unavailable) = (d.clone(), unavailable.clone());
        async move {
            let mut pair = Vec::new();
            for side in ["a", "b"] {
                let player = format!("mid-{}-{}-{side}", names.0, names.1);
                let (ticket, token) = search(&d, &unavailable, &player, 2000.0).await;
                pair.push((player, ticket, token));
            }
            pair
        }
    });
    // The middle pair's first request is answered (or refused) while the
    // slot is split between the two masters.
    let deadline = Instant::now() + Duration::from_secs(10);
    while unavailable.load(Ordering::SeqCst) == 0 && !middle.is_finished() {
        assert!(
            Instant::now() < deadline,
            "the middle pair never got an answer"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let moved = tokio::task::block_in_place(|| moving.finish(10));
    let owner = cluster::settled(seed, slot, Duration::from_secs(20)).await;
    assert_eq!(owner.id, to.id, "slot {slot} did not move to {}", to.port);
    let middle = middle.await.unwrap();
    eprintln!(
        "slot {slot}: {moved} keys moved {} -> {}; {} 503s for the pair in the middle",
        from.port,
        to.port,
        unavailable.load(Ordering::SeqCst)
    );
    traffic.until_more(3).await;
    middle
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_modes_slot_moving_and_its_master_restarting_lose_and_double_no_match() {
    let url = cluster::cluster_url();
    let _lock = ClusterLock::exclusive().await;
    let seed = cluster::seed(&url);
    let d = Arc::new(Deployment::start("clmove", &url, 2, &[LONG_REST_POLL]).await);
    // MMR windows capped at ±300: the anchor (0), the lonely pair (1000)
    // and the traffic (2000) never match across.
    d.mode(
        json!({"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
                  "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5,
                                "expansionMultiplier": 2, "maxTolerance": 10}}),
    )
    .await;
    let none = AtomicUsize::new(0);
    // A search that stays in the pool throughout, so the pool key exists.
    let (anchor, anchor_token) = search(&d, &none, "anchor", 0.0).await;
    let slot = cluster::mode_slot(&seed, &d.prefix, "duel", Duration::from_secs(10)).await;
    let home = cluster::owner(&seed, slot).await;
    let away = cluster::masters(&seed)
        .await
        .into_iter()
        .find(|m| m.id != home.id)
        .expect("a second master");

    // 2. The slot moves away and back while pairs keep searching.
    let traffic = Traffic::start(d.clone());
    traffic.until_more(2).await;
    let mut middle = move_under_traffic(&d, &seed, slot, &home, &away, &traffic).await;
    let pattern = format!("{}:*duel*:pool", d.prefix);
    assert!(
        !cluster::scan(&away, &pattern).await.is_empty(),
        "the pool is not on {} after the move",
        away.port
    );
    middle.extend(move_under_traffic(&d, &seed, slot, &away, &home, &traffic).await);
    assert!(
        !cluster::scan(&home, &pattern).await.is_empty(),
        "the pool is not back on {}",
        home.port
    );
    let (mut started, unavailable) = traffic.stop().await;
    started.extend(middle);
    eprintln!(
        "{} searches during the moves; {unavailable} requests answered 503",
        started.len()
    );
    let mut told = BTreeMap::new();
    tell_rest(&d, &mut told, &started).await;
    assert_each_match_once(&d, &told).await;

    // 3. The slot's master is killed and started again while the workers
    // cycle.
    let (lonely, lonely_token) = search(&d, &none, "lonely-before", 1000.0).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while d.status(&lonely, &lonely_token).await.body["waitingReason"].is_null() {
        assert!(Instant::now() < deadline, "no cycle saw the lonely search");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let home = cluster::owner(&seed, slot).await;
    cluster::ensure_aof(&home).await;
    let probing = Arc::new(AtomicBool::new(true));
    let prober = tokio::spawn({
        let (d, probing) = (d.clone(), probing.clone());
        async move {
            let mut answers = Vec::new();
            let path = format!("/v1/projects/{}/tickets", d.project);
            let mut n = 0;
            while probing.load(Ordering::SeqCst) {
                let body = json!({"gameMode": "duel", "playerId": format!("probe-{n}"),
                                  "attributes": {"mmr": 2000}});
                answers.push(
                    d.api
                        .send(reqwest::Method::POST, &path, &d.bearer, Some(body))
                        .await,
                );
                answers.push(d.api.send(reqwest::Method::GET, "/readyz", "", None).await);
                n += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            answers
        }
    });
    cluster::restart(&seed, &home).await;
    // The URL's first node restarts too, if it is not the slot's: the
    // processes' status subscriptions (how a WebSocket hears of its match)
    // may be on it, and move.
    let first = cluster::masters(&seed)
        .await
        .into_iter()
        .find(|m| m.url() == seed)
        .expect("the seed is a master");
    if first.id != home.id {
        cluster::restart(&seed, &first).await;
    }
    let owner = cluster::settled(&seed, slot, Duration::from_secs(30)).await;
    assert_eq!(owner.id, home.id, "the restarted master lost slot {slot}");
    d.api.wait_ready(Duration::from_secs(30), &d.dir).await;
    probing.store(false, Ordering::SeqCst);
    let answers = prober.await.unwrap();
    let refused = answers.iter().filter(|a| a.status == 503).count();
    for a in &answers {
        assert!(
            matches!(a.status, 200 | 201) || (a.status == 503 && a.retry_after.is_some()),
            "during the restart: {a:?}; logs in {}",
            d.dir.display()
        );
    }
    eprintln!(
        "restart of {}: {} probes, {refused} answered 503",
        home.port,
        answers.len()
    );

    // The search from before the restart is matched with one from after it,
    // a new pair (one over REST, one over WebSocket) is matched, the anchor
    // is still searching.
    let (late, late_token) = search(&d, &none, "lonely-after", 1000.0).await;
    let mut after = vec![
        ("lonely-before".to_owned(), lonely, lonely_token),
        ("lonely-after".to_owned(), late, late_token),
    ];
    let (ticket, token) = search(&d, &none, "after-rest", 2000.0).await;
    after.push(("after-rest".to_owned(), ticket, token));
    let (_, token) = d.ticket("duel", "after-ws", 2000.0).await;
    let socket = tokio::spawn(ws_search(
        d.api.base.clone(),
        token,
        Instant::now() + Duration::from_secs(30),
    ));
    tell(&d, &mut told, "after-ws", &socket.await.unwrap(), "type");
    tell_rest(&d, &mut told, &after).await;
    assert_eq!(
        told["lonely-before"], told["lonely-after"],
        "the search from before the restart"
    );
    let a = d.status(&anchor, &anchor_token).await;
    assert_eq!(a.body["status"], "searching", "the anchor: {a:?}");
    assert_each_match_once(&d, &told).await;
    assert_eq!(none.load(Ordering::SeqCst), 0, "503s outside the restart");
}
