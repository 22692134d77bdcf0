//! The worker's live-ops metrics (docs/operations.md, 'Metrics'), scraped
//! from its recorder as `--metrics-listen` serves it: every closed label
//! set is at 0 from the start, and driving a cycle, an expiry, a deleted
//! mode's failure and a failing webhook moves the right series. Each test
//! records into its own recorder (a current-thread runtime inside
//! `with_local_recorder`), so the values are exact.

use crate::env::Env;
use crate::receiver::{Receiver, Reply};
use chrono::Utc;
use matchplane_matchmaker::Search;
use matchplane_store::repos::game_modes;
use matchplane_worker::metrics::build_recorder;
use matchplane_worker::sweep::Sweeper;
use std::time::Duration;

fn unix_now() -> f64 {
    Utc::now().timestamp_micros() as f64 / 1e6
}

/// Runs `test` on a current-thread runtime recording into a fresh worker
/// recorder; `test` gets the recorder's renderer.
fn recorded<F>(test: impl FnOnce(metrics_exporter_prometheus::PrometheusHandle) -> F)
where
    F: std::future::Future<Output = ()>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let recorder = build_recorder().unwrap();
    let handle = recorder.handle();
    metrics::with_local_recorder(&recorder, || runtime.block_on(test(handle)));
}

/// The value of the sample `series` (name and labels as rendered).
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.parse().unwrap())
}

#[test]
fn every_closed_label_set_is_at_zero_from_the_start() {
    recorded(|handle| async move {
        let text = handle.render();
        let mut expected = vec![
            r#"matchplane_webhook_backlog"#.to_owned(),
            r#"matchplane_webhook_deliveries_total{outcome="failed"}"#.to_owned(),
            r#"matchplane_webhook_deliveries_total{outcome="succeeded"}"#.to_owned(),
            r#"matchplane_webhook_attempts_total{result="error"}"#.to_owned(),
            r#"matchplane_webhook_attempts_total{result="5xx"}"#.to_owned(),
            r#"matchplane_cycles_total"#.to_owned(),
            r#"matchplane_worker_modes_held"#.to_owned(),
        ];
        for outcome in ["matched", "expired", "cancelled", "failed"] {
            expected.push(format!(
                r#"matchplane_searches_ended_total{{outcome="{outcome}"}}"#
            ));
        }
        for code in matchplane_store::search_ends::FAILURE_CODES {
            expected.push(format!(
                r#"matchplane_searches_failed_total{{code="{code}"}}"#
            ));
        }
        for series in &expected {
            assert_eq!(value(&text, series), Some(0.0), "{series} in {text}");
        }
        for family in [
            "matchplane_searches_ended_total",
            "matchplane_searches_failed_total",
            "matchplane_webhook_backlog",
        ] {
            assert!(
                text.contains(&format!("# HELP {family} ")),
                "{family}: {text}"
            );
        }
    });
}

#[test]
fn a_cycle_counts_matched_searches_waiting_reasons_and_match_quality() {
    recorded(|handle| async move {
        let env = Env::new(None, 60.0).await;
        let (project, mode) = (&env.project_id, "duel");
        env.add("a", 1500.0).await;
        env.add("b", 1520.0).await;
        // Left over alone: waits for more players.
        env.add("c", 2900.0).await;
        let due = format!("tkt_{}", ulid::Ulid::new());
        let search = Search::solo(due.clone(), "late", 1500.0, unix_now() - 5.0);
        env.pool
            .add_search(&env.mode, &search, unix_now() - 1.0, None)
            .await
            .unwrap();
        let token = env.lease("w1", Duration::from_secs(30)).await;
        let (_, report) = env.tick(token).await;
        assert_eq!(report.matches, 1);
        let text = handle.render();
        let at = |labels: &str| format!(r#"{{project="{project}",mode="{mode}"{labels}}}"#);
        assert_eq!(
            value(
                &text,
                r#"matchplane_searches_ended_total{outcome="matched"}"#
            ),
            Some(2.0),
            "{text}"
        );
        assert_eq!(
            value(
                &text,
                r#"matchplane_searches_ended_total{outcome="expired"}"#
            ),
            Some(1.0),
            "{text}"
        );
        assert_eq!(
            value(
                &text,
                &format!(
                    "matchplane_searches_waiting{}",
                    at(r#",reason="NOT_ENOUGH_PLAYERS""#)
                )
            ),
            Some(1.0),
            "{text}"
        );
        // Every reason has its series, 0 where none waits for it.
        assert_eq!(
            value(
                &text,
                &format!(
                    "matchplane_searches_waiting{}",
                    at(r#",reason="PARTY_INCOMPLETE""#)
                )
            ),
            Some(0.0),
            "{text}"
        );
        // Rules and role queues' reasons too (docs/operations.md).
        for reason in ["RULE_NOT_MET", "NO_ROLE_SEATING"] {
            let series = format!(r#",reason="{reason}""#);
            assert_eq!(
                value(
                    &text,
                    &format!("matchplane_searches_waiting{}", at(&series))
                ),
                Some(0.0),
                "{reason}: {text}"
            );
        }
        for family in [
            "matchplane_match_mmr_spread",
            "matchplane_match_team_imbalance",
        ] {
            assert_eq!(
                value(&text, &format!("{family}_count{}", at(""))),
                Some(1.0),
                "{family}: {text}"
            );
        }
        // 1500 against 1520: a spread of 20, in the bucket up to 25 only.
        assert_eq!(
            value(
                &text,
                &format!("matchplane_match_mmr_spread_bucket{}", at(r#",le="10""#))
            ),
            Some(0.0),
            "{text}"
        );
        assert_eq!(
            value(
                &text,
                &format!("matchplane_match_mmr_spread_bucket{}", at(r#",le="25""#))
            ),
            Some(1.0),
            "{text}"
        );
    });
}

#[test]
fn a_deleted_modes_searches_count_as_failed_by_code() {
    recorded(|handle| async move {
        let env = Env::new(None, 60.0).await;
        env.add("a", 1500.0).await;
        game_modes::delete(&env.db, &env.project_id, "duel")
            .await
            .unwrap();
        let sweeper = Sweeper {
            pool: env.pool.as_ref(),
            db: &env.db,
            expire_batch: 100,
            concurrency: 4,
            ends: None,
            lapses: None,
        };
        assert_eq!(sweeper.pass(Utc::now()).await.unwrap().failed, 1);
        let text = handle.render();
        assert_eq!(
            value(
                &text,
                r#"matchplane_searches_ended_total{outcome="failed"}"#
            ),
            Some(1.0),
            "{text}"
        );
        assert_eq!(
            value(
                &text,
                r#"matchplane_searches_failed_total{code="GAME_MODE_DISABLED"}"#
            ),
            Some(1.0),
            "{text}"
        );
        assert_eq!(
            value(&text, r#"matchplane_searches_failed_total{code="OTHER"}"#),
            Some(0.0),
            "{text}"
        );
    });
}

#[test]
fn a_failing_webhook_shows_in_the_backlog_and_the_attempts() {
    recorded(|handle| async move {
        let receiver = Receiver::start(vec![], Reply::status(503)).await;
        let env = Env::new(Some(&receiver.url()), 60.0).await;
        env.add("a", 1500.0).await;
        env.add("b", 1500.0).await;
        let token = env.lease("w1", Duration::from_secs(30)).await;
        assert_eq!(env.tick(token).await.1.matches, 1);
        assert_eq!(env.drain("c1").await, 1);
        let deliveries = env.deliveries(0.001);
        deliveries.count_backlog().await;
        let text = handle.render();
        assert_eq!(
            value(&text, "matchplane_webhook_backlog"),
            Some(1.0),
            "{text}"
        );
        let attempted = deliveries.tick(Utc::now(), 10).await.unwrap();
        assert_eq!(attempted.len(), 1);
        let text = handle.render();
        assert_eq!(
            value(&text, r#"matchplane_webhook_attempts_total{result="5xx"}"#),
            Some(1.0),
            "{text}"
        );
    });
}

#[test]
fn a_made_proposal_ends_matched_and_a_silent_member_fails_by_timeout() {
    recorded(|handle| async move {
        let receiver = Receiver::start(vec![], Reply::status(204)).await;
        let env = Env::new(Some(&receiver.url()), 1.0).await;
        let mut config = crate::env::mode_config("duel", Some(&receiver.url()), 1.0);
        config["acceptance"] = serde_json::json!({"timeoutSeconds": 1});
        game_modes::replace(&env.db, &env.project_id, "duel", config, Utc::now())
            .await
            .unwrap();
        let (a, b) = (env.add("a", 1500.0).await, env.add("b", 1500.0).await);
        let token = env.lease("w1", Duration::from_secs(30)).await;
        env.tick(token).await;
        let text = handle.render();
        let at = format!(r#"{{project="{}",mode="duel"}}"#, env.project_id);
        // The group held is a match the cycle formed: its quality counts;
        // nobody is matched until everyone accepted.
        assert_eq!(
            value(&text, &format!("matchplane_match_mmr_spread_count{at}")),
            Some(1.0),
            "{text}"
        );
        let matched = r#"matchplane_searches_ended_total{outcome="matched"}"#;
        assert_eq!(value(&text, matched), Some(0.0), "{text}");
        env.pool
            .answer(
                &env.mode,
                &a,
                true,
                Utc::now().timestamp_micros() as f64 / 1e6,
            )
            .await
            .unwrap();
        env.pool
            .answer(
                &env.mode,
                &b,
                true,
                Utc::now().timestamp_micros() as f64 / 1e6,
            )
            .await
            .unwrap();
        let swept = matchplane_worker::proposals::sweep(
            env.pool.as_ref(),
            &env.mode,
            (unix_now(), f64::INFINITY),
            None,
        )
        .await
        .unwrap();
        assert_eq!(swept.made, 1);
        assert_eq!(env.drain("c1").await, 1);
        assert_eq!(value(&handle.render(), matched), Some(2.0));

        // Two more, both silent past the deadline: both fail.
        env.add("c", 1500.0).await;
        env.add("d", 1500.0).await;
        env.tick(token).await;
        let later = unix_now() + 1.5;
        let swept =
            matchplane_worker::proposals::sweep(env.pool.as_ref(), &env.mode, (later, later), None)
                .await
                .unwrap();
        assert_eq!(swept.cancelled, 1);
        env.drain("c1").await;
        let text = handle.render();
        assert_eq!(
            value(
                &text,
                r#"matchplane_searches_failed_total{code="ACCEPTANCE_TIMEOUT"}"#
            ),
            Some(2.0),
            "{text}"
        );
        assert_eq!(
            value(
                &text,
                r#"matchplane_searches_ended_total{outcome="failed"}"#
            ),
            Some(2.0),
            "{text}"
        );
    });
}
