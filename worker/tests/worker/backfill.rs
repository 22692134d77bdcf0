//! Backfill end to end on PostgreSQL and Redis: an open backfill is served
//! before new matches; a party of two never takes one open seat; the newer
//! roster (a replaced backfill) is the one used; the fill is claimed, stored
//! once, delivered as a signed `match.backfilled` whose `webhook-id` is the
//! fill id, and its player reads `matched` with the match, its team and
//! `backfill: true`; the last seat taken, the backfill is `filled`. A
//! worker killed mid-fill loses nothing and stores nothing twice; a close
//! racing a cycle ends with the fill or the close; an automatic backfill
//! whose worker died before opening it is opened by the match's outbox consumer.
//! The crash cases run on both pool stores.

use crate::env::{mode_config, verified_body, Env};
use crate::receiver::{Receiver, Reply};
use chrono::Utc;
use matchplane_matchmaker::{OpenBackfill, Party, Search};
use matchplane_store::entities::backfill;
use matchplane_store::pool::{BackfillChange, BackfillStatus, EndOutcome, Ended, SearchState};
use matchplane_store::repos::{backfills, deliveries, game_modes, matches};
use matchplane_worker::tick::TickOutcome;
use serde_json::{json, Value};
use std::time::Duration;

fn now_secs() -> f64 {
    Utc::now().timestamp_micros() as f64 / 1e6
}

async fn open(env: &Env, match_id: &str, seats: &[u32]) -> OpenBackfill {
    let now = Utc::now();
    let id = format!("bf_{}", ulid::Ulid::new());
    backfills::open(
        &env.db,
        backfill::Model {
            open_roles: None,
            id: id.clone(),
            project_id: env.project_id.clone(),
            game_mode: "duel".into(),
            match_id: match_id.to_owned(),
            open_match_id: Some(match_id.to_owned()),
            status: backfills::OPEN.into(),
            roster: json!({"teams": []}),
            open_seats: json!(seats),
            fills: 0,
            seats_filled: 0,
            revision: 1,
            created_at: now,
            updated_at: now,
            expires_at: now + chrono::Duration::seconds(120),
        },
        now,
    )
    .await
    .unwrap();
    let live = OpenBackfill {
        open_roles: Vec::new(),
        backfill_id: id.as_str().into(),
        match_id: match_id.into(),
        revision: 1,
        open_seats: seats.to_vec(),
        opened_at: now_secs(),
        expires_at: now_secs() + 120.0,
        mean_mmr: Some(1500.0),
        pings: Vec::new(),
        region: None,
        roster: Default::default(),
    };
    env.pool.open_backfill(&env.mode, &live).await.unwrap();
    live
}

fn duo(env_party: &str, mmr: f64, queued_at: f64) -> Vec<Search> {
    let members: Vec<String> = (0..2).map(|i| format!("{env_party}-{i}")).collect();
    members
        .iter()
        .map(|m| Search {
            ticket_id: format!("tkt_{}", ulid::Ulid::new()).into(),
            player_id: m.as_str().into(),
            party: Some(Party {
                id: env_party.into(),
                members: members.clone(),
            }),
            mmr: Some(mmr),
            ping_ms: None,
            latencies: None,
            queued_at,
            attributes: Default::default(),
        })
        .collect()
}

#[tokio::test]
async fn a_fill_is_claimed_stored_and_delivered_with_the_newer_roster() {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    let mut config = mode_config("duel", Some(&receiver.url()), 1.0);
    config["matchShape"] = json!([2, 2]);
    config["parties"] = json!({"allowParties": true, "maxSize": 2, "keepTogether": true});
    config["backfill"] = json!({"enabled": true, "ttlSeconds": 120});
    game_modes::replace(&env.db, &env.project_id, "duel", config, Utc::now())
        .await
        .unwrap();

    // A running match.
    for (p, mmr) in [("a", 1500.0), ("b", 1510.0), ("c", 1490.0), ("d", 1505.0)] {
        env.add(p, mmr).await;
    }
    let token = env.lease("w1", Duration::from_secs(5)).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));
    assert_eq!(env.drain("w1").await, 1);
    env.deliveries(1.0).tick(Utc::now(), 10).await.unwrap();
    let match_id = matches::list(&env.db, &env.project_id, None, None, 10)
        .await
        .unwrap()[0]
        .id
        .clone();

    // A player of team 1 left; then the roster changed again: team 0's.
    let first = open(&env, &match_id, &[0, 1]).await;
    let newer = OpenBackfill {
        open_roles: Vec::new(),
        open_seats: vec![1, 0],
        ..first.clone()
    };
    env.pool.replace_backfill(&env.mode, &newer).await.unwrap();

    // A duo waited longest, but one seat cannot take two; the solo fits.
    for s in duo("pair", 1500.0, now_secs() - 20.0) {
        env.add_search(&s).await;
    }
    let solo = env.add("e", 1502.0).await;
    let (outcome, report) = env.tick(token).await;
    assert_eq!(outcome, TickOutcome::Matched(1), "{report:?}");
    assert_eq!((report.fills, report.seats_filled), (1, 1));
    assert_eq!(
        env.pool.snapshot(&env.mode).await.unwrap().len(),
        2,
        "the duo waits"
    );
    match env.pool.search_state(&env.mode, &solo).await.unwrap() {
        Some(SearchState::Ended(ended)) => {
            assert_eq!(
                ended.how,
                Ended::Matched {
                    match_id: match_id.clone()
                }
            )
        }
        other => panic!("{other:?}"),
    }
    let live = env
        .pool
        .backfill(&env.mode, &first.backfill_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(live.status, BackfillStatus::Filled);
    assert_eq!(live.backfill.open_seats, vec![0, 0]);

    // Stored once, even when the record is handed over twice.
    assert_eq!(env.drain("w1").await, 1);
    assert_eq!(env.drain("w1").await, 0);
    let row = backfills::get(&env.db, &env.project_id, &first.backfill_id)
        .await
        .unwrap();
    assert_eq!(row.status, backfills::FILLED);
    assert_eq!((row.fills, row.seats_filled), (1, 1));
    let fills = backfills::fills(&env.db, &env.project_id, &first.backfill_id)
        .await
        .unwrap();
    assert_eq!(fills.len(), 1);
    let stored = matches::get(&env.db, &env.project_id, &match_id)
        .await
        .unwrap();
    let team0: Vec<Value> = stored.teams[0]["players"].as_array().unwrap().clone();
    let newcomer = team0.iter().find(|p| p["ticketId"] == json!(solo)).unwrap();
    assert_eq!(
        newcomer["backfill"],
        json!(true),
        "on team 0: the newer roster's seat"
    );

    // The signed match.backfilled, its webhook-id the fill id.
    let attempted = env.deliveries(1.0).tick(Utc::now(), 10).await.unwrap();
    assert_eq!(attempted.len(), 1);
    let received = receiver.received();
    let request = received.last().unwrap();
    assert_eq!(request.header("webhook-id"), fills[0].id);
    assert!(fills[0].id.starts_with("bff_"));
    let body = verified_body(&env, request);
    assert_eq!(body["type"], "match.backfilled");
    assert_eq!(body["matchId"], json!(match_id));
    assert_eq!(body["backfillId"], json!(first.backfill_id.as_str()));
    assert_eq!(body["openSeatsLeft"], json!([0, 0]));
    assert_eq!(body["teams"][0]["index"], 0);
    assert_eq!(body["teams"][0]["players"][0]["ticketId"], json!(solo));

    // Filled: the next cycle takes nobody into it.
    let (outcome, report) = env.tick(token).await;
    assert_eq!(report.fills, 0, "{outcome:?}");
}

#[tokio::test]
async fn auto_opens_a_backfill_for_a_relaxed_match_named_in_its_webhook() {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    let mut config = mode_config("duel", Some(&receiver.url()), 1.0);
    config["matchShape"] = json!([2, 2]);
    config["relaxations"] = json!([{"afterSeconds": 20, "matchShape": [1, 1]}]);
    config["backfill"] = json!({"enabled": true, "auto": true, "ttlSeconds": 120});
    game_modes::replace(&env.db, &env.project_id, "duel", config, Utc::now())
        .await
        .unwrap();
    env.add_waited("a", 1500.0, 30.0).await;
    env.add("b", 1510.0).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));
    assert_eq!(env.drain("w1").await, 1);
    env.deliveries(1.0).tick(Utc::now(), 10).await.unwrap();
    let received = receiver.received();
    let body = verified_body(&env, received.last().unwrap());
    assert_eq!(body["type"], "match.made");
    assert_eq!(body["seatsOpen"], json!([1, 1]));
    let backfill_id = body["backfillId"].as_str().unwrap().to_owned();
    let row = backfills::get(&env.db, &env.project_id, &backfill_id)
        .await
        .unwrap();
    assert_eq!(row.status, backfills::OPEN);
    assert_eq!(row.match_id, body["matchId"].as_str().unwrap());

    // Its seats are filled like any request's.
    env.add("c", 1505.0).await;
    let (_, report) = env.tick(token).await;
    assert_eq!((report.fills, report.seats_filled), (1, 1));
    let live = env
        .pool
        .backfill(&env.mode, &backfill_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(live.backfill.seats_left(), 1);
}

/// In a mode with acceptance the automatic request dates from when the
/// match was made, its last player's accept (the match's `madeAt`), not
/// from the proposal: its TTL and age count from then (docs/backfill.md,
/// "Automatic requests"). Before, it dated from the proposal, losing the
/// time the players took to accept.
#[tokio::test]
async fn an_automatic_backfill_of_a_proposal_dates_from_its_made_at() {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    let mut config = mode_config("duel", Some(&receiver.url()), 1.0);
    config["matchShape"] = json!([2, 2]);
    config["relaxations"] = json!([{"afterSeconds": 20, "matchShape": [1, 1]}]);
    config["backfill"] = json!({"enabled": true, "auto": true, "ttlSeconds": 120});
    config["acceptance"] = json!({"timeoutSeconds": 20});
    game_modes::replace(&env.db, &env.project_id, "duel", config, Utc::now())
        .await
        .unwrap();
    let a = env.add_waited("a", 1500.0, 30.0).await;
    let b = env.add("b", 1510.0).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));
    // The players take 1.5 s to accept.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let now = || Utc::now().timestamp_micros() as f64 / 1e6;
    for ticket in [&a, &b] {
        env.pool
            .answer(&env.mode, ticket, true, now())
            .await
            .unwrap();
    }
    let swept = matchplane_worker::proposals::sweep(
        env.pool.as_ref(),
        &env.mode,
        (now(), f64::INFINITY),
        None,
    )
    .await
    .unwrap();
    assert_eq!(swept.made, 1);
    assert_eq!(env.drain("w1").await, 1);
    let made = matches::list(&env.db, &env.project_id, None, None, 10)
        .await
        .unwrap()
        .remove(0);
    let made_at = made.made_at.expect("a made proposal");
    assert!(made_at - made.created_at >= chrono::Duration::milliseconds(1400));
    let row = backfills::of_match(&env.db, &env.project_id, &made.id)
        .await
        .unwrap()
        .remove(0);
    let backfill_id = row.id.clone();
    assert_eq!(row.created_at, made_at, "dated from the match's madeAt");
    assert_eq!(row.expires_at, made_at + chrono::Duration::seconds(120));
    let live = env
        .pool
        .backfill(&env.mode, &backfill_id)
        .await
        .unwrap()
        .unwrap();
    let made_secs = made_at.timestamp_micros() as f64 / 1e6;
    assert!(
        (live.backfill.opened_at - made_secs).abs() < 1e-3,
        "{}",
        live.backfill.opened_at
    );
}

/// A `[1, 1]` MMR mode with backfill on, a webhook to `receiver`, and one
/// stored running match of `a` and `b`; (lease token, match id).
async fn running_match(env: &Env, url: &str) -> (u64, String) {
    let mut config = mode_config("duel", Some(url), 1.0);
    config["backfill"] = json!({"enabled": true, "ttlSeconds": 120});
    game_modes::replace(&env.db, &env.project_id, "duel", config, Utc::now())
        .await
        .unwrap();
    env.add("a", 1500.0).await;
    env.add("b", 1500.0).await;
    let token = env.lease("w1", Duration::from_secs(30)).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));
    assert_eq!(env.drain("w1").await, 1);
    let match_id = matches::list(&env.db, &env.project_id, None, None, 10)
        .await
        .unwrap()[0]
        .id
        .clone();
    (token, match_id)
}

/// How often `ticket` sits in the stored match's teams.
async fn seated_times(env: &Env, match_id: &str, ticket: &str) -> usize {
    let stored = matches::get(&env.db, &env.project_id, match_id)
        .await
        .unwrap();
    stored
        .teams
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["players"].as_array().unwrap().clone())
        .filter(|p| p["ticketId"] == json!(ticket))
        .count()
}

async fn a_worker_killed_mid_fill_loses_nothing_and_duplicates_nothing(env: Env) {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let (token, match_id) = running_match(&env, &receiver.url()).await;
    let backfill = open(&env, &match_id, &[1, 0]).await;
    let c = env.add("c", 1500.0).await;
    let (_, report) = env.tick(token).await;
    assert_eq!((report.fills, report.seats_filled), (1, 1));

    // w1 takes the fill's record and dies before storing it.
    let taken = env
        .pool
        .read_outbox(&env.mode, "w1", 10, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(taken.len(), 1);
    // w2 leaves it while it may be in w1's hands, takes it once idle.
    let w2 = env.consumer("w2", Duration::from_millis(300));
    assert_eq!(w2.drain(&env.mode, true, Utc::now(), 10).await.unwrap(), 0);
    assert!(
        backfills::fills(&env.db, &env.project_id, &backfill.backfill_id)
            .await
            .unwrap()
            .is_empty()
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(w2.drain(&env.mode, true, Utc::now(), 10).await.unwrap(), 1);
    // The record handed over once more (a consumer that stored it and died
    // before its ACK): nothing is stored twice.
    w2.record_batch(&env.mode, &taken, true, Utc::now())
        .await
        .unwrap();
    assert_eq!(env.drain("w3").await, 0);

    let fills = backfills::fills(&env.db, &env.project_id, &backfill.backfill_id)
        .await
        .unwrap();
    assert_eq!(fills.len(), 1);
    let row = backfills::get(&env.db, &env.project_id, &backfill.backfill_id)
        .await
        .unwrap();
    assert_eq!((row.fills, row.seats_filled), (1, 1));
    assert_eq!(row.status, backfills::FILLED);
    assert_eq!(row.open_seats, json!([0, 0]));
    assert_eq!(seated_times(&env, &match_id, &c).await, 1);
    let delivered: Vec<String> = deliveries::of_match(&env.db, &env.project_id, &match_id)
        .await
        .unwrap()
        .into_iter()
        .map(|(d, _)| d.event_type)
        .collect();
    assert_eq!(delivered, ["match.made", "match.backfilled"]);
    match env.pool.search_state(&env.mode, &c).await.unwrap() {
        Some(SearchState::Ended(ended)) => assert_eq!(
            ended.how,
            Ended::Matched {
                match_id: match_id.clone()
            }
        ),
        other => panic!("{other:?}"),
    }
    let live = env
        .pool
        .backfill(&env.mode, &backfill.backfill_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(live.status, BackfillStatus::Filled);
    assert_eq!(live.backfill.open_seats, vec![0, 0]);
    env.add("d", 1500.0).await;
    let (_, report) = env.tick(token).await;
    assert_eq!(report.fills, 0, "no seat is left");
}

#[tokio::test]
async fn a_worker_killed_mid_fill_loses_nothing_and_duplicates_nothing_on_redis() {
    a_worker_killed_mid_fill_loses_nothing_and_duplicates_nothing(Env::new(None, 1.0).await).await;
}

#[tokio::test]
async fn a_worker_killed_mid_fill_loses_nothing_and_duplicates_nothing_in_memory() {
    a_worker_killed_mid_fill_loses_nothing_and_duplicates_nothing(Env::on_memory(None, 1.0).await)
        .await;
}

async fn a_close_racing_a_cycle_ends_with_the_fill_or_the_close(env: Env) {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let (token, match_id) = running_match(&env, &receiver.url()).await;
    let (mut fills, mut closes) = (0, 0);
    for round in 0..12u64 {
        let backfill = open(&env, &match_id, &[1, 0]).await;
        let c = env.add(&format!("c{round}"), 1500.0).await;
        // The close as the API does it (the pool store first, then the
        // row), 0 to 25 ms into the cycle: either may come first.
        let close = async {
            tokio::time::sleep(Duration::from_millis(round % 6 * 5)).await;
            let change = env
                .pool
                .close_backfill(&env.mode, &backfill.backfill_id)
                .await
                .unwrap();
            if matches!(change, BackfillChange::Changed { .. }) {
                backfills::end(
                    &env.db,
                    &env.project_id,
                    &backfill.backfill_id,
                    backfills::CLOSED,
                    Utc::now(),
                )
                .await
                .unwrap();
            }
            change
        };
        let ((_, report), change) = tokio::join!(env.tick(token), close);
        env.drain("w1").await;
        let row = backfills::get(&env.db, &env.project_id, &backfill.backfill_id)
            .await
            .unwrap();
        let stored = backfills::fills(&env.db, &env.project_id, &backfill.backfill_id)
            .await
            .unwrap();
        let seated = seated_times(&env, &match_id, &c).await;
        match change {
            BackfillChange::NotOpen(BackfillStatus::Filled) => {
                assert_eq!(report.fills, 1, "round {round}");
                assert_eq!(row.status, backfills::FILLED, "round {round}");
                assert_eq!((stored.len(), seated), (1, 1), "round {round}");
                fills += 1;
            }
            BackfillChange::Changed { .. } => {
                assert_eq!(report.fills, 0, "round {round}");
                assert_eq!(row.status, backfills::CLOSED, "round {round}");
                assert_eq!((stored.len(), seated), (0, 0), "round {round}");
                assert!(matches!(
                    env.pool.search_state(&env.mode, &c).await.unwrap(),
                    Some(SearchState::Live(_))
                ));
                env.pool
                    .end_search(&env.mode, &c, &EndOutcome::Cancelled)
                    .await
                    .unwrap();
                closes += 1;
            }
            other => panic!("round {round}: {other:?}"),
        }
    }
    assert_eq!(fills + closes, 12);
}

#[tokio::test]
async fn a_close_racing_a_cycle_ends_with_the_fill_or_the_close_on_redis() {
    a_close_racing_a_cycle_ends_with_the_fill_or_the_close(Env::new(None, 1.0).await).await;
}

#[tokio::test]
async fn a_close_racing_a_cycle_ends_with_the_fill_or_the_close_in_memory() {
    a_close_racing_a_cycle_ends_with_the_fill_or_the_close(Env::on_memory(None, 1.0).await).await;
}

async fn an_automatic_backfill_outlives_a_worker_dying_before_opening_it(env: Env) {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let mut config = mode_config("duel", Some(&receiver.url()), 1.0);
    config["matchShape"] = json!([2, 2]);
    config["relaxations"] = json!([{"afterSeconds": 20, "matchShape": [1, 1]}]);
    config["backfill"] = json!({"enabled": true, "auto": true, "ttlSeconds": 120});
    game_modes::replace(&env.db, &env.project_id, "duel", config, Utc::now())
        .await
        .unwrap();
    env.add_waited("a", 1500.0, 30.0).await;
    env.add("b", 1510.0).await;
    let token = env.lease("w1", Duration::from_secs(30)).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));

    // The claim's worker died before opening the backfill (its state is
    // not in the pool store) and after taking the match's record.
    let taken = env
        .pool
        .read_outbox(&env.mode, "w1", 10, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(taken.len(), 1);
    let record: Value = serde_json::from_str(&taken[0].record_json).unwrap();
    let backfill_id = record["backfillId"].as_str().unwrap().to_owned();
    env.pool
        .forget_backfill(&env.mode, &backfill_id)
        .await
        .unwrap();

    // Another worker records the match: the request is stored with it and
    // opened where fills find it, from the match's own record.
    let w2 = env.consumer("w2", Duration::from_millis(300));
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(w2.drain(&env.mode, true, Utc::now(), 10).await.unwrap(), 1);
    let row = backfills::get(&env.db, &env.project_id, &backfill_id)
        .await
        .unwrap();
    assert_eq!(row.status, backfills::OPEN);
    assert_eq!(row.open_seats, json!([1, 1]));
    assert_eq!(
        row.expires_at - row.created_at,
        chrono::Duration::seconds(120)
    );
    let live = env
        .pool
        .backfill(&env.mode, &backfill_id)
        .await
        .unwrap()
        .expect("opened again");
    assert_eq!(live.status, BackfillStatus::Open);
    assert_eq!(live.backfill.open_seats, vec![1, 1]);
    assert_eq!(live.backfill.expires_at - live.backfill.opened_at, 120.0);
    assert_eq!(live.backfill.mean_mmr, Some(1505.0));

    // Its seats are filled like any request's.
    let c = env.add("c", 1505.0).await;
    let (_, report) = env.tick(token).await;
    assert_eq!((report.fills, report.seats_filled), (1, 1));
    assert_eq!(env.drain("w2").await, 1);

    // The match's record handed over again: the request is neither stored
    // twice nor reset (the seat the fill took stays taken).
    w2.record_batch(&env.mode, &taken, true, Utc::now())
        .await
        .unwrap();
    let live = env
        .pool
        .backfill(&env.mode, &backfill_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(live.backfill.seats_left(), 1);
    let row = backfills::get(&env.db, &env.project_id, &backfill_id)
        .await
        .unwrap();
    assert_eq!((row.fills, row.seats_filled), (1, 1));
    let left: u64 = row
        .open_seats
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_u64)
        .sum();
    assert_eq!(left, 1);
    assert_eq!(seated_times(&env, &row.match_id, &c).await, 1);
}

#[tokio::test]
async fn an_automatic_backfill_outlives_a_worker_dying_before_opening_it_on_redis() {
    an_automatic_backfill_outlives_a_worker_dying_before_opening_it(Env::new(None, 1.0).await)
        .await;
}

#[tokio::test]
async fn an_automatic_backfill_outlives_a_worker_dying_before_opening_it_in_memory() {
    an_automatic_backfill_outlives_a_worker_dying_before_opening_it(
        Env::on_memory(None, 1.0).await,
    )
    .await;
}
