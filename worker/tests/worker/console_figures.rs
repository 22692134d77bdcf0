//! What a cycle leaves for a console: a summary of the pool it saw (by
//! waiting reason, MMR histogram) with the last cycle's figures, and the
//! minute's figures merged into the mode's stats history; idle cycles add
//! no minute; the pruning pass deletes what is past the retention.

use crate::env::Env;
use chrono::{TimeDelta, Utc};
use matchplane_matchmaker::pool_summary::PoolSummary;
use matchplane_store::repos::cycle_stats;
use matchplane_store::repos::stats_history::{self, Figures};
use matchplane_worker::retention::{Pruner, RetentionConfig};
use matchplane_worker::tick::TickOutcome;
use std::time::Duration;

#[tokio::test]
async fn a_cycle_stores_its_pool_summary_and_its_minute() {
    let env = Env::new(None, 1.0).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    // An empty pool: an idle cycle keeps no minute.
    let (outcome, _) = env.tick(token).await;
    assert_eq!(outcome, TickOutcome::Idle);
    let hour =
        |now: chrono::DateTime<Utc>| (now - TimeDelta::hours(1), now + TimeDelta::minutes(2));
    let (from, to) = hour(Utc::now());
    let none = stats_history::minutes(&env.db, &env.project_id, "duel", from, to)
        .await
        .unwrap();
    assert!(none.is_empty(), "{none:?}");

    // Two close players match, one far one waits.
    env.add_waited("a", 1500.0, 4.0).await;
    env.add_waited("b", 1504.0, 2.0).await;
    env.add("far", 2900.0).await;
    let (outcome, _) = env.tick(token).await;
    assert_eq!(outcome, TickOutcome::Matched(1));

    let last = cycle_stats::get(&env.db, &env.project_id, "duel")
        .await
        .unwrap()
        .unwrap();
    let summary: PoolSummary = serde_json::from_str(last.pool_summary.as_deref().unwrap()).unwrap();
    assert_eq!(summary.searching, 3);
    assert_eq!(summary.matched, 2);
    assert_eq!(summary.waiting_reasons.values().sum::<u64>(), 1);
    let mmr = summary.mmr.unwrap();
    assert_eq!(mmr.counts.iter().sum::<u64>(), 3);

    let (from, to) = hour(Utc::now());
    let rows = stats_history::minutes(&env.db, &env.project_id, "duel", from, to)
        .await
        .unwrap();
    let figures = rows.iter().fold(Figures::default(), |mut all, row| {
        all.merge(&Figures::of_row(row));
        all
    });
    assert_eq!(figures.matches, 1);
    assert_eq!(figures.matched_players, 2);
    assert_eq!(figures.waits.total(), 2);
    assert_eq!(figures.spreads.total(), 1);
    assert_eq!(figures.searching_max, 3);

    // A minute past the retention goes at the next pruning pass; today's stays.
    let old = Utc::now() - TimeDelta::days(20);
    stats_history::record(
        &env.db,
        &env.project_id,
        "duel",
        old,
        &Figures::of_cycle(5, []),
    )
    .await
    .unwrap();
    let cancel = tokio_util::sync::CancellationToken::new();
    let pruner = Pruner {
        db: &env.db,
        holder: "w1",
        config: RetentionConfig::default(),
        cancel: &cancel,
    };
    let report = pruner.pass(Utc::now()).await.unwrap().unwrap();
    assert_eq!(report.stats_minutes, 1, "{report:?}");
    let kept = stats_history::minutes(
        &env.db,
        &env.project_id,
        "duel",
        old - TimeDelta::days(1),
        to,
    )
    .await
    .unwrap();
    assert_eq!(kept.len(), rows.len());
}
