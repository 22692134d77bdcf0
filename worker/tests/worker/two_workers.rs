//! Two workers on one mode: never a cycle of the mode on both at once, never
//! a search matched twice; one killed (not shut down), the other takes the
//! mode over within twice the lease time; a graceful shutdown releases the
//! lease at once.

use crate::env::Env;
use matchplane_store::repos::matches;
use matchplane_worker::config::CycleHook;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

const LEASE: Duration = Duration::from_secs(2);

type Log = Arc<Mutex<Vec<(String, bool, Instant)>>>;

fn hook(name: &str, log: &Log) -> CycleHook {
    let (name, log) = (name.to_owned(), Arc::clone(log));
    Arc::new(move |_, start, at| log.lock().unwrap().push((name.clone(), start, at)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_never_cycle_at_once_nor_match_twice() {
    let env = Env::new(None, 0.1).await;
    let log: Log = Arc::default();
    let spawn = |name: &str| {
        let mut config = env.worker_config(name);
        // Long enough that a loaded test machine does not let it lapse
        // mid-cycle (that would be safe, claims are fenced, but is not
        // what this test is about).
        config.lease_ttl = LEASE;
        config.on_cycle = Some(hook(name, &log));
        let shutdown = CancellationToken::new();
        let task = env.spawn_worker(config, &shutdown);
        (task, shutdown)
    };
    let (one, _one_stop) = spawn("one");
    let (two, two_stop) = spawn("two");
    let mut added = 0;
    for wave in 0..10 {
        for i in 0..10 {
            env.add(&format!("p{wave}-{i}"), 1500.0).await;
            added += 1;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Kill whichever worker holds the mode (abort: no release, no cleanup).
    let holder = log.lock().unwrap().last().unwrap().0.clone();
    let killed_at = Instant::now();
    let survivor = if holder == "one" {
        one.abort();
        "two"
    } else {
        two.abort();
        "one"
    };
    for i in 0..10 {
        env.add(&format!("late-{i}"), 1500.0).await;
        added += 1;
    }
    let lease = LEASE;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let stored = matches::list(&env.db, &env.project_id, None, None, 1000)
            .await
            .unwrap();
        if stored.len() * 2 == added {
            break;
        }
        assert!(Instant::now() < deadline, "only {} matches", stored.len());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let takeover = log
        .lock()
        .unwrap()
        .iter()
        .find(|(name, start, at)| name == survivor && *start && *at > killed_at)
        .map(|(_, _, at)| *at - killed_at);
    if holder != survivor {
        let takeover = takeover.expect("the survivor cycled after the kill");
        assert!(takeover <= lease * 2, "taken over after {takeover:?}");
    }

    // Cycles never overlap across workers. The killed worker's cycle cut
    // short by the abort has no end: it ends at the kill.
    let events = log.lock().unwrap().clone();
    let mut intervals: Vec<(String, Instant, Instant)> = Vec::new();
    let mut open: std::collections::HashMap<String, Instant> = Default::default();
    for (name, start, at) in &events {
        if *start {
            open.insert(name.clone(), *at);
        } else if let Some(began) = open.remove(name) {
            intervals.push((name.clone(), began, *at));
        }
    }
    for (name, began) in open {
        let end = if name == holder {
            killed_at
        } else {
            Instant::now()
        };
        intervals.push((name, began, end));
    }
    for (i, (a, a0, a1)) in intervals.iter().enumerate() {
        for (b, b0, b1) in &intervals[i + 1..] {
            if a != b {
                assert!(a1 <= b0 || b1 <= a0, "{a} and {b} cycled at once");
            }
        }
    }

    // Every search matched exactly once.
    let stored = matches::list(&env.db, &env.project_id, None, None, 1000)
        .await
        .unwrap();
    let mut seen = HashSet::new();
    for row in &stored {
        for team in row.teams.as_array().unwrap() {
            for player in team["players"].as_array().unwrap() {
                assert!(seen.insert(player["ticketId"].as_str().unwrap().to_owned()));
            }
        }
    }
    assert_eq!(seen.len(), added);

    // A graceful shutdown releases the lease at once.
    let stop = if survivor == "two" {
        two_stop
    } else {
        _one_stop
    };
    stop.cancel();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(env
        .pool
        .acquire_lease(&env.mode, "next", Duration::from_secs(1))
        .await
        .unwrap()
        .is_some());
}
