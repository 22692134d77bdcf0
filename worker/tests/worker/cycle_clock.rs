//! The cycle clock (docs/game-modes.md, `matchmakingCycleDurationSeconds`):
//! the next cycle starts a full pause after the previous one ended, so a
//! slow cycle never shortens the pause before the next (never back to
//! back). Before: a fixed-rate clock started the next cycle a period after
//! the previous one started, so a cycle of 60 ms in a 200 ms mode left a
//! pause of 140 ms.

use crate::env::Env;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_cycle_starts_a_full_pause_after_the_last_one_ended() {
    let pause = Duration::from_millis(200);
    let env = Env::new(None, pause.as_secs_f64()).await;
    let log: Arc<Mutex<Vec<(bool, Instant)>>> = Arc::default();
    let mut config = env.worker_config("clock");
    let seen = Arc::clone(&log);
    // Each cycle takes at least 60 ms (the hook blocks at its start).
    config.on_cycle = Some(Arc::new(move |_, start, at| {
        seen.lock().unwrap().push((start, at));
        if start {
            std::thread::sleep(Duration::from_millis(60));
        }
    }));
    let stop = CancellationToken::new();
    let task = env.spawn_worker(config, &stop);
    env.add("solo", 1500.0).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    stop.cancel();
    let _ = task.await;

    let log = log.lock().unwrap().clone();
    let pauses: Vec<Duration> = log
        .windows(2)
        .filter(|w| !w[0].0 && w[1].0)
        .map(|w| w[1].1.duration_since(w[0].1))
        .collect();
    assert!(pauses.len() >= 4, "too few cycles: {log:?}");
    for (i, gap) in pauses.iter().enumerate() {
        assert!(
            *gap + Duration::from_millis(1) >= pause,
            "pause {i} after a cycle's end was {gap:?}, under {pause:?}: {pauses:?}"
        );
    }
}
