//! The sweep: due searches expire between cycles, and a deleted mode's or
//! project's searches fail with `GAME_MODE_DISABLED`, found through the
//! pool store alone, also when no worker ran at the delete and for a search
//! started after it.

use crate::env::Env;
use chrono::Utc;
use futures::StreamExt;
use matchplane_matchmaker::Search;
use matchplane_store::pool::{Ended, ModeKey, SearchState, StatusStream};
use matchplane_store::repos::{game_modes, projects};
use matchplane_worker::sweep::{SweepReport, Sweeper};
use matchplane_worker::WorkerError;
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

fn unix_now() -> f64 {
    Utc::now().timestamp_micros() as f64 / 1e6
}

/// Adds a solo search of `player` in `mode` with `deadline`.
async fn add(env: &Env, mode: &ModeKey, player: &str, deadline: f64) -> String {
    let ticket = format!("tkt_{}", ulid::Ulid::new());
    let search = Search::solo(ticket.clone(), player, 1500.0, unix_now());
    env.pool
        .add_search(mode, &search, deadline, None)
        .await
        .unwrap();
    ticket
}

async fn ended(env: &Env, mode: &ModeKey, ticket: &str) -> Option<Ended> {
    env.pool
        .search_state(mode, ticket)
        .await
        .unwrap()
        .and_then(SearchState::into_ended)
}

/// Waits up to `bound` for `ticket` to end; how it ended.
async fn ended_within(env: &Env, mode: &ModeKey, ticket: &str, bound: Duration) -> Ended {
    let since = Instant::now();
    loop {
        if let Some(how) = ended(env, mode, ticket).await {
            return how;
        }
        assert!(
            since.elapsed() < bound,
            "{ticket} not ended within {bound:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A whole worker over `env`, as `matchplane worker` runs it.
fn start_worker(env: &Env) -> (CancellationToken, JoinHandle<Result<(), WorkerError>>) {
    let shutdown = CancellationToken::new();
    let worker = env.spawn_worker(env.worker_config("w1"), &shutdown);
    (shutdown, worker)
}

/// The next status message of `stream`, within two seconds.
async fn told(stream: &mut StatusStream) -> serde_json::Value {
    let message = tokio::time::timeout(Duration::from_secs(2), stream.next())
        .await
        .expect("a status message")
        .unwrap();
    serde_json::from_str(&message).unwrap()
}

fn sweeper(env: &Env) -> Sweeper<'_> {
    Sweeper {
        pool: env.pool.as_ref(),
        db: &env.db,
        expire_batch: 1000,
        concurrency: 16,
        ends: None,
        lapses: None,
    }
}

#[tokio::test]
async fn a_pass_expires_due_searches_and_fails_a_deleted_modes() {
    let env = Env::new(None, 60.0).await;
    let now = unix_now();
    let due = add(&env, &env.mode, "due", now - 1.0).await;
    let waiting = add(&env, &env.mode, "waiting", now + 600.0).await;
    let mut updates = env.pool.subscribe_status(&due).await.unwrap();
    let report = sweeper(&env).pass(Utc::now()).await.unwrap();
    assert_eq!(
        report,
        SweepReport {
            modes: 1,
            expired: 1,
            failed: 0
        }
    );
    assert_eq!(ended(&env, &env.mode, &due).await, Some(Ended::Expired));
    assert_eq!(ended(&env, &env.mode, &waiting).await, None);
    assert_eq!(told(&mut updates).await["type"], "expired");

    game_modes::delete(&env.db, &env.project_id, "duel")
        .await
        .unwrap();
    let report = sweeper(&env).pass(Utc::now()).await.unwrap();
    assert_eq!((report.expired, report.failed), (0, 1));
    assert!(matches!(
        ended(&env, &env.mode, &waiting).await,
        Some(Ended::Failed { code, message }) if code == "GAME_MODE_DISABLED" && message == "the game mode was deleted"
    ));
    assert_eq!(env.pool.count_live(&env.project_id).await.unwrap(), 0);
    // Nothing left: the next pass finds no pool.
    assert_eq!(
        sweeper(&env).pass(Utc::now()).await.unwrap(),
        SweepReport::default()
    );
}

#[tokio::test]
async fn a_running_worker_expires_searches_between_cycles() {
    // A minute between cycles: the expiry is the sweep's.
    let env = Env::new(None, 60.0).await;
    let (shutdown, worker) = start_worker(&env);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let ticket = add(&env, &env.mode, "soon", unix_now() + 0.5).await;
    let how = ended_within(&env, &env.mode, &ticket, Duration::from_secs(3)).await;
    assert_eq!(how, Ended::Expired);
    shutdown.cancel();
    worker.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_deleted_projects_searches_fail_also_with_no_worker_at_the_delete() {
    let env = Env::new(None, 1.0).await;
    let a = env.add("a", 100.0).await;
    let b = env.add("b", 2900.0).await; // out of range: both wait
    let mut updates = env.pool.subscribe_status(&a).await.unwrap();
    // Deleted while no worker runs: no loop of its modes is left to see it.
    projects::delete(&env.db, &env.project_id).await.unwrap();

    let (shutdown, worker) = start_worker(&env);
    let bound = Duration::from_secs(3);
    for ticket in [&a, &b] {
        assert!(matches!(
            ended_within(&env, &env.mode, ticket, bound).await,
            Ended::Failed { code, message } if code == "GAME_MODE_DISABLED" && message == "the project was deleted"
        ));
    }
    let message = told(&mut updates).await;
    assert_eq!(message["type"], "failed");
    assert_eq!(message["code"], "GAME_MODE_DISABLED");
    assert_eq!(live_within(&env, bound).await, 0);

    // A search a stale config cache let start after the delete fails too.
    let late = add(&env, &env.mode, "late", unix_now() + 600.0).await;
    assert!(matches!(
        ended_within(&env, &env.mode, &late, bound).await,
        Ended::Failed { code, .. } if code == "GAME_MODE_DISABLED"
    ));
    assert_eq!(live_within(&env, bound).await, 0);
    shutdown.cancel();
    worker.await.unwrap().unwrap();
}

/// The project's live count once it reads 0, or as it reads at `bound`:
/// the count follows an end by a step of its own (the project's slot), so
/// it may trail the ended record by a round trip or two.
async fn live_within(env: &Env, bound: Duration) -> u64 {
    let deadline = tokio::time::Instant::now() + bound;
    loop {
        let live = env.pool.count_live(&env.project_id).await.unwrap();
        if live == 0 || tokio::time::Instant::now() >= deadline {
            return live;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// After the store was out of reach for longer than ten seconds (the
/// sweep's calls failed), a search whose deadline fell in the outage is not
/// expired for the next 30 seconds: its client could not poll or renew
/// meanwhile (docs/searching.md). What was due before the outage still is,
/// and once the grace is over the search expires as any other. Before,
/// the first pass after the outage expired it at once.
#[tokio::test]
async fn a_deadline_that_fell_in_an_outage_of_the_store_gets_a_grace() {
    let env = Env::new(None, 60.0).await;
    let grace = matchplane_worker::lapse_grace::LapseGrace::default();
    let sweeper = Sweeper {
        lapses: Some(&grace),
        ..sweeper(&env)
    };
    let start = Utc::now();
    let at = |s: i64| start + chrono::Duration::seconds(s);
    let t0 = start.timestamp_micros() as f64 / 1e6;
    let before = add(&env, &env.mode, "before", t0 - 1.0).await;
    sweeper.pass(at(0)).await.unwrap();
    assert_eq!(ended(&env, &env.mode, &before).await, Some(Ended::Expired));
    // Due in the outage (the store answered nothing from 0 s to 25 s),
    // and due just before it: the first pass after it expires only the
    // second.
    let polled = add(&env, &env.mode, "polled", t0 + 5.0).await;
    let stale = add(&env, &env.mode, "stale", t0 - 0.5).await;
    // The passes in between failed (the store did not answer).
    grace.failed_all();
    let report = sweeper.pass(at(25)).await.unwrap();
    assert_eq!(report.expired, 1, "{report:?}");
    assert_eq!(ended(&env, &env.mode, &stale).await, Some(Ended::Expired));
    assert_eq!(ended(&env, &env.mode, &polled).await, None);
    // Within the grace (the sweep passing as it does, every few seconds
    // here) a poll would renew it; without one, it ends after.
    for s in [30, 35, 40, 45, 50, 54] {
        assert_eq!(sweeper.pass(at(s)).await.unwrap().expired, 0, "at {s} s");
    }
    assert_eq!(ended(&env, &env.mode, &polled).await, None);
    assert_eq!(sweeper.pass(at(56)).await.unwrap().expired, 1);
    assert_eq!(ended(&env, &env.mode, &polled).await, Some(Ended::Expired));
}
