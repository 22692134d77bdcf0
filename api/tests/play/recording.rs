//! Recording of a mode's searches (issue 22): starts and cancels recorded
//! with hashed ids off the request path, the worker's ends (matched,
//! expired, failed) under the same hashes, served as `arrivalsCsv`, replayed
//! under two configs, and the guard of a `PUT` over the last hour.

use crate::harness::{call, duel, fast, Pools, TestApp, RECORDING_KEY};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use matchplane_matchmaker::simulate::{parse_arrivals_csv, Event};
use matchplane_store::entities::search_recording;
use matchplane_store::repos::recordings::{self, IdHasher, Kind, NewRecording};
use matchplane_worker::{run_worker, WorkerConfig};
use sea_orm::{EntityTrait, QueryOrder};
use serde_json::{json, Value};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

on_both_pools!(
    starts_and_cancels_are_recorded_hashed_and_served_as_csv,
    every_end_is_recorded_under_the_start_hash_wherever_it_happens,
    the_guard_refuses_a_regression_and_passes_a_harmless_change,
    the_guard_refuses_tripling_the_wait_on_the_bundled_real_games,
    a_deleted_modes_recording_is_deleted_with_it,
    the_same_player_hashes_differently_in_each_project,
    a_deleted_projects_queued_rows_leave_the_others_stored,
    a_flush_stores_every_row_queued_before_it
);

/// `duel` with recording on, one-second cycles.
fn recorded(name: &str) -> Value {
    let mut mode = duel(name);
    mode["matchmakingCycleDurationSeconds"] = json!(1);
    mode["recording"] = json!({"enabled": true, "retentionDays": 7});
    mode
}

/// The mode's recorded rows, once `n` are there (the writer flushes every
/// 200 ms; a loaded machine may take seconds).
async fn rows(t: &TestApp, n: usize) -> Vec<search_recording::Model> {
    rows_keeping(t, n, None).await
}

/// [`rows`], polling the REST search `(ticket, token)` meanwhile when
/// given, so that it does not lapse while the test waits.
async fn rows_keeping(
    t: &TestApp,
    n: usize,
    keep_alive: Option<(&str, &str)>,
) -> Vec<search_recording::Model> {
    for _ in 0..300 {
        if let Some((ticket, token)) = keep_alive {
            let _ = t
                .call(
                    Method::GET,
                    &format!("/v1/searches/{ticket}"),
                    Some(&format!("Ticket {token}")),
                    None,
                )
                .await;
        }
        let all = search_recording::Entity::find()
            .order_by_asc(search_recording::Column::Id)
            .all(&t.db)
            .await
            .unwrap();
        if all.len() >= n {
            return all;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("fewer than {n} recorded rows after 30 s");
}

async fn starts_and_cancels_are_recorded_hashed_and_served_as_csv(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("pro").await;
    t.mode(&p, &key, recorded("duel")).await;
    t.mode(&p, &key, duel("quiet")).await;

    let (_, alice) = t
        .ticket_ok(
            &p,
            &key,
            json!({"gameMode": "duel", "playerId": "alice", "attributes": {"mmr": 1510},
                   "party": {"id": "pty_1", "members": ["alice", "bob"]}}),
        )
        .await;
    let (bob_id, bob) = t
        .ticket_ok(
            &p,
            &key,
            json!({"gameMode": "duel", "playerId": "bob", "attributes": {"mmr": 1490},
                   "party": {"id": "pty_1", "members": ["alice", "bob"]}}),
        )
        .await;
    let (_, carol) = t
        .ticket_ok(
            &p,
            &key,
            json!({"gameMode": "quiet", "playerId": "carol", "attributes": {"mmr": 1500}}),
        )
        .await;
    for token in [&alice, &bob, &carol] {
        let a = t.rest_search(token).await;
        assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
    }
    let cancelled = t
        .call(
            Method::DELETE,
            &format!("/v1/searches/{bob_id}"),
            Some(&format!("Ticket {bob}")),
            None,
        )
        .await;
    assert_eq!(cancelled.status, StatusCode::OK, "{}", cancelled.body);

    // Two starts and a cancel of the recorded mode; nothing of the quiet one.
    let stored = rows(&t, 3).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let stored_again = search_recording::Entity::find().all(&t.db).await.unwrap();
    assert_eq!(stored.len(), 3, "{stored:?}");
    assert_eq!(stored_again.len(), 3, "{stored_again:?}");
    assert!(stored.iter().all(|r| r.game_mode == "duel"), "{stored:?}");
    let kinds: Vec<_> = stored.iter().map(|r| Kind::of(r.event)).collect();
    assert_eq!(
        kinds,
        [Some(Kind::Start), Some(Kind::Start), Some(Kind::Cancel)]
    );
    // Ids are keyed hashes: never the raw ids, the same id the same hash.
    let text = format!("{stored:?}");
    for raw in ["alice", "bob", "pty_1"] {
        assert!(!text.contains(raw), "{raw} stored raw: {text}");
    }
    assert_eq!(stored[0].player_hash.len(), 32);
    assert_ne!(stored[0].player_hash, stored[1].player_hash);
    assert_eq!(
        stored[1].player_hash, stored[2].player_hash,
        "bob cancelled"
    );
    assert_eq!(stored[0].mmr, Some(1510.0));
    let members = stored[0].party_members.clone().unwrap();
    assert_eq!(
        members,
        format!("{}|{}", stored[0].player_hash, stored[1].player_hash)
    );

    // The CSV reads back as simulate's arrivals, with the cancel.
    let csv = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/duel/recording"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(csv.status, StatusCode::OK, "{}", csv.body);
    let text = csv.body.as_str().unwrap();
    assert!(text
        .starts_with("at,playerId,mmr,pingMs,partyId,partyMembers,latencies,event,attributes\n"));
    let events = parse_arrivals_csv(text, None).unwrap();
    assert_eq!(events.len(), 3, "{text}");
    match &events[0] {
        Event::Arrival {
            at,
            player_id,
            mmr,
            party,
            ..
        } => {
            assert!(
                (3590.0..=3600.0).contains(at),
                "{at}: seconds since an hour ago"
            );
            assert_eq!(player_id, &stored[0].player_hash);
            assert_eq!(*mmr, Some(1510.0));
            assert_eq!(party.as_ref().unwrap().members.len(), 2);
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(&events[2], Event::Cancel { player_id, .. } if *player_id == stored[1].player_hash),
        "{events:?}"
    );

    // A window that holds nothing: the header alone; a backwards one: 422.
    let empty = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/duel/recording?from=2026-01-01T00:00:00Z&to=2026-01-01T01:00:00Z"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(empty.status, StatusCode::OK);
    assert_eq!(
        empty.body.as_str().unwrap().lines().count(),
        1,
        "{}",
        empty.body
    );
    let backwards = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/duel/recording?from=2026-01-01T01:00:00Z&to=2026-01-01T00:00:00Z"),
            Some(&key),
            None,
        )
        .await;
    backwards.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(backwards.body["errors"][0]["field"], "from");
}

/// Each stored row as (player hash, kind, outcome), in id order.
fn events_of(rows: &[search_recording::Model]) -> Vec<(String, Option<Kind>, Option<String>)> {
    rows.iter()
        .map(|r| (r.player_hash.clone(), Kind::of(r.event), r.outcome.clone()))
        .collect()
}

async fn every_end_is_recorded_under_the_start_hash_wherever_it_happens(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("pro").await;
    t.mode(&p, &key, recorded("duel")).await;
    let shutdown = CancellationToken::new();
    let worker = tokio::spawn(run_worker(
        WorkerConfig {
            reconcile_interval: Duration::from_millis(100),
            sweep_interval: Duration::from_millis(200),
            recording_key: Some(RECORDING_KEY.to_owned()),
            ..WorkerConfig::default()
        },
        t.play.pool.clone(),
        t.play.tickets.clone(),
        t.db.clone(),
        shutdown.clone(),
    ));
    let hash = |id: &str| {
        IdHasher::new(RECORDING_KEY.as_bytes())
            .unwrap()
            .hash(&p, id)
    };
    let ticket = |player: &str, mmr: u32| json!({"gameMode": "duel", "playerId": player, "attributes": {"mmr": mmr}});

    // Carol searches over REST once and never polls again: the worker's
    // sweep ends her search (`expired`).
    let (_, carol) = t.ticket_ok(&p, &key, ticket("carol", 1500)).await;
    assert_eq!(t.rest_search(&carol).await.status, StatusCode::ACCEPTED);
    let stored = rows(&t, 2).await;
    assert_eq!(
        events_of(&stored),
        [
            (hash("carol"), Some(Kind::Start), None),
            (hash("carol"), Some(Kind::End), Some("expired".to_owned())),
        ]
    );

    // Alice and Bob are matched: both ends recorded once the match is stored.
    let (alice_id, alice) = t.ticket_ok(&p, &key, ticket("alice", 1500)).await;
    let (_, bob) = t.ticket_ok(&p, &key, ticket("bob", 1500)).await;
    for token in [&alice, &bob] {
        assert_eq!(t.rest_search(token).await.status, StatusCode::ACCEPTED);
    }
    let stored = rows_keeping(&t, 6, Some((&alice_id, &alice))).await;
    let mut ends: Vec<_> = events_of(&stored[2..])
        .into_iter()
        .filter(|(_, kind, _)| *kind == Some(Kind::End))
        .collect();
    ends.sort_by(|a, b| a.0.cmp(&b.0));
    let mut expected = vec![
        (hash("alice"), Some(Kind::End), Some("matched".to_owned())),
        (hash("bob"), Some(Kind::End), Some("matched".to_owned())),
    ];
    expected.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(ends, expected, "{stored:?}");

    // Dave waits alone; a config change rules his MMR out and the cycle's
    // re-check fails his search.
    let (dave_id, dave) = t.ticket_ok(&p, &key, ticket("dave", 2900)).await;
    assert_eq!(t.rest_search(&dave).await.status, StatusCode::ACCEPTED);
    let _ = rows_keeping(&t, 7, Some((&dave_id, &dave))).await;
    let mut narrower = recorded("duel");
    narrower["algorithm"]["maxMmr"] = json!(2000);
    let changed = put(&t, &p, &key, "", narrower).await;
    assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    let stored = rows_keeping(&t, 8, Some((&dave_id, &dave))).await;
    assert_eq!(
        events_of(&stored[7..]),
        [(
            hash("dave"),
            Some(Kind::End),
            Some("failed:MMR_OUT_OF_RANGE".to_owned())
        )],
        "{stored:?}"
    );

    // Erin's cancel lands on an instance that never read the mode's config.
    let (erin_id, erin) = t.ticket_ok(&p, &key, ticket("erin", 1000)).await;
    assert_eq!(t.rest_search(&erin).await.status, StatusCode::ACCEPTED);
    let other = t.other_instance().await;
    let cancelled = call(
        &other.app,
        Method::DELETE,
        &format!("/v1/searches/{erin_id}"),
        Some(&format!("Ticket {erin}")),
        None,
    )
    .await;
    assert_eq!(cancelled.status, StatusCode::OK, "{}", cancelled.body);
    let stored = rows(&t, 10).await;
    assert_eq!(
        events_of(&stored[8..]),
        [
            (hash("erin"), Some(Kind::Start), None),
            (hash("erin"), Some(Kind::Cancel), None),
        ],
        "{stored:?}"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    let all = search_recording::Entity::find().all(&t.db).await.unwrap();
    assert_eq!(all.len(), 10, "nothing recorded twice: {all:?}");
    // The CSV (and so a replay) carries the starts and the one cancel: the
    // worker's ends (expired, matched, failed) are not cancels to replay.
    let csv = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/duel/recording"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(csv.status, StatusCode::OK);
    let text = csv.body.as_str().unwrap();
    let kinds: Vec<(&str, &str)> = text
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            Some((*f.get(1)?, *f.get(7)?))
        })
        .collect();
    assert_eq!(kinds.iter().filter(|k| k.1 == "start").count(), 5, "{text}");
    let erin = hash("erin");
    assert_eq!(
        kinds.iter().filter(|k| k.1 == "cancel").collect::<Vec<_>>(),
        [&(erin.as_str(), "cancel")],
        "{text}"
    );
    shutdown.cancel();
    worker.await.unwrap().unwrap();
}

/// The first `games` bundled Lichess games (`data/lichess/lichess-games.csv`),
/// their players arriving 2 a second with their real ratings from a minute
/// into the last hour, recorded in `mode` as the writer would.
async fn real_games(t: &TestApp, project: &str, mode: &str, games: usize) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let csv = std::fs::read_to_string(format!("{root}/data/lichess/lichess-games.csv")).unwrap();
    let replay = matchplane_matchmaker::simulate::lichess_arrivals(&csv, games, 2.0).unwrap();
    let start = chrono::Utc::now().timestamp_millis() - 3_540_000;
    let rows: Vec<NewRecording> = replay
        .events
        .iter()
        .map(|e| match e {
            Event::Arrival {
                at, player_id, mmr, ..
            } => NewRecording {
                mmr: *mmr,
                ..NewRecording::event(
                    project,
                    mode,
                    Kind::Start,
                    player_id.clone(),
                    start + (at * 1000.0) as i64,
                )
            },
            other => panic!("{other:?}"),
        })
        .collect();
    for chunk in rows.chunks(1000) {
        recordings::insert_batch(&t.db, chunk).await.unwrap();
    }
}

async fn put(
    t: &TestApp,
    project: &str,
    key: &str,
    query: &str,
    body: Value,
) -> crate::harness::Answer {
    call(
        &t.app,
        Method::PUT,
        &format!("/v1/projects/{project}/game-modes/duel{query}"),
        Some(key),
        Some(body),
    )
    .await
}

async fn the_guard_refuses_a_regression_and_passes_a_harmless_change(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("pro").await;
    let current = recorded("duel");

    // No mode, then no recording: RECORDING_REQUIRED.
    put(&t, &p, &key, "?guard=waitP90", current.clone())
        .await
        .assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "RECORDING_REQUIRED");
    t.mode(&p, &key, current.clone()).await;
    let mut tight = current.clone();
    tight["algorithm"]["baseTolerance"] = json!(1);
    tight["algorithm"]["expansionMultiplier"] = json!(1);
    put(&t, &p, &key, "?guard=waitP90", tight.clone())
        .await
        .assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "RECORDING_REQUIRED");

    // Unknown figures are named, with the body's own errors.
    let mut bad = tight.clone();
    bad["matchShape"] = json!([]);
    let unknown = put(
        &t,
        &p,
        &key,
        "?guard=waitP90,waitP95&guardTolerance=11",
        bad,
    )
    .await;
    unknown.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    let fields: Vec<&str> = unknown.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    for field in ["matchShape", "guard", "guardTolerance"] {
        assert!(fields.contains(&field), "{field} in {}", unknown.body);
    }
    assert!(
        unknown.body.to_string().contains("waitP95"),
        "{}",
        unknown.body
    );

    real_games(&t, &p, "duel", 500).await;

    // The replay answers both reports and the diff.
    let replay = call(
        &t.app,
        Method::POST,
        &format!("/v1/projects/{p}/game-modes/duel/replay"),
        Some(&key),
        Some(tight.clone()),
    )
    .await;
    assert_eq!(replay.status, StatusCode::OK, "{}", replay.body);
    assert_eq!(replay.body["arrivals"], 1000, "{}", replay.body);
    let [a, b] = [
        &replay.body["diff"]["waitP90"][0],
        &replay.body["diff"]["waitP90"][1],
    ]
    .map(|v| v.as_f64().unwrap());
    assert!(b > 3.0 * a, "a tight range waits far longer: {a} -> {b}");
    assert!(
        replay.body["a"]["stats"]["matches"].as_u64().unwrap() > 100,
        "{}",
        replay.body
    );

    // A tighter range refused: both figures in the body, the mode unchanged.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let refused = put(&t, &p, &key, "?guard=waitP90,mmrSpreadP50", tight.clone()).await;
    refused.assert_problem(StatusCode::CONFLICT, "CONFIG_REGRESSION");
    let figures = &refused.body["guard"]["figures"];
    assert_eq!(figures[0]["figure"], "waitP90", "{}", refused.body);
    // The guard's hour ends a moment later than the replay's (the cycles
    // fall elsewhere in the arrivals): figures of the same size.
    let [ga, gb] = [&figures[0]["current"], &figures[0]["proposed"]].map(|v| v.as_f64().unwrap());
    assert!(gb > 3.0 * ga, "{ga} -> {gb}");
    assert!(
        (ga - a).abs() <= 2.0 && (gb - b).abs() <= 0.25 * b,
        "{ga} {gb} vs {a} {b}"
    );
    assert_eq!(figures[0]["regressed"], true);
    assert_eq!(figures[1]["figure"], "mmrSpreadP50");
    assert_eq!(
        figures[1]["regressed"], false,
        "a tighter range spreads less"
    );
    assert_eq!(refused.body["guard"]["tolerance"], 0.1);
    let got = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/duel"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(got.body["version"], 1, "{}", got.body);

    // Guarding only the spread lets it through; so does a harmless change.
    let mut harmless = current.clone();
    harmless["ticketTtlSeconds"] = json!(900);
    let passed = put(&t, &p, &key, "?guard=waitP90&guardTolerance=0", harmless).await;
    assert_eq!(passed.status, StatusCode::OK, "{}", passed.body);
    assert_eq!(passed.body["version"], 2, "{}", passed.body);
    // (A third guarded PUT within the second would be refused: below.)
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let passed = put(&t, &p, &key, "?guard=mmrSpreadP50", tight.clone()).await;
    assert_eq!(passed.status, StatusCode::OK, "{}", passed.body);
    assert_eq!(passed.body["version"], 3, "{}", passed.body);

    // A guarded PUT runs a replay and shares its limits: of three at once,
    // one is refused at once (the project's two a second, two running).
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let mut changed = tight;
    changed["ticketTtlSeconds"] = json!(901);
    let three = futures::future::join_all(
        (0..3).map(|_| put(&t, &p, &key, "?guard=waitP90", changed.clone())),
    )
    .await;
    let limited: Vec<_> = three
        .iter()
        .filter(|a| a.status == StatusCode::TOO_MANY_REQUESTS)
        .collect();
    let statuses: Vec<_> = three.iter().map(|a| a.status).collect();
    assert!(!limited.is_empty(), "{statuses:?}");
    limited[0].assert_problem(StatusCode::TOO_MANY_REQUESTS, "RATE_LIMITED");
    assert!(three.iter().all(|a| !a.status.is_server_error()));
}

/// The worked example of docs/tuning.md: the first 2 000 bundled Lichess
/// games (`data/lichess/lichess-games.csv`), their players arriving 2 a
/// second with their real ratings, recorded over the last hour; the
/// tighter tolerance of `examples/lichess-1v1-tight.json` is refused.
async fn the_guard_refuses_tripling_the_wait_on_the_bundled_real_games(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("pro").await;
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let scenario: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{root}/examples/lichess-1v1.json")).unwrap(),
    )
    .unwrap();
    let mut current = scenario["gameMode"].clone();
    current["recording"] = json!({"enabled": true, "retentionDays": 7});
    let mut tight: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{root}/examples/lichess-1v1-tight.json")).unwrap(),
    )
    .unwrap();
    tight["recording"] = current["recording"].clone();
    t.mode(&p, &key, current).await;
    real_games(&t, &p, "lichess-1v1", 2000).await;
    let refused = call(
        &t.app,
        Method::PUT,
        &format!("/v1/projects/{p}/game-modes/lichess-1v1?guard=waitP90,mmrSpreadP50"),
        Some(&key),
        Some(tight),
    )
    .await;
    refused.assert_problem(StatusCode::CONFLICT, "CONFIG_REGRESSION");
    println!("{}", refused.body);
    let figures = &refused.body["guard"]["figures"];
    let [a, b] = [&figures[0]["current"], &figures[0]["proposed"]].map(|v| v.as_f64().unwrap());
    assert!(b >= 2.5 * a, "the p90 wait about triples: {a} -> {b}");
    assert_eq!(figures[1]["figure"], "mmrSpreadP50");
    assert!(
        figures[1]["worsenedBy"].as_f64().unwrap() < -0.5,
        "{}",
        refused.body
    );
}

/// A mode's recording goes with the mode (docs/game-modes.md, a mode
/// created again under a deleted mode's name is a new mode): the new mode
/// serves no recording and has nothing to replay; another mode's recording
/// stays.
async fn a_deleted_modes_recording_is_deleted_with_it(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("pro").await;
    let mut rteam = recorded("rteam");
    rteam["recording"] = json!({"enabled": true, "retentionDays": 1});
    t.mode(&p, &key, rteam).await;
    t.mode(&p, &key, recorded("kept")).await;
    for (mode, player) in [("rteam", "alice"), ("rteam", "bob"), ("kept", "carol")] {
        let (_, token) = t
            .ticket_ok(
                &p,
                &key,
                json!({"gameMode": mode, "playerId": player, "attributes": {"mmr": 1500}}),
            )
            .await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    }
    let stored = rows(&t, 3).await;
    assert_eq!(
        stored.iter().filter(|r| r.game_mode == "rteam").count(),
        2,
        "{stored:?}"
    );

    let deleted = t
        .call(
            Method::DELETE,
            &format!("/v1/projects/{p}/game-modes/rteam"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT, "{}", deleted.body);
    t.mode(&p, &key, duel("rteam")).await;

    let csv = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/rteam/recording"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(csv.status, StatusCode::OK, "{}", csv.body);
    assert_eq!(
        csv.body.as_str().unwrap().lines().count(),
        1,
        "the deleted mode's starts are served: {}",
        csv.body
    );
    let replay = call(
        &t.app,
        Method::POST,
        &format!("/v1/projects/{p}/game-modes/rteam/replay"),
        Some(&key),
        Some(duel("rteam")),
    )
    .await;
    replay.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "RECORDING_REQUIRED");
    let left = search_recording::Entity::find().all(&t.db).await.unwrap();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].game_mode, "kept");
}

/// Recorded ids are keyed per project: the same player (and party) id
/// hashes differently in two projects, and within one the worker's hash of
/// a player is the API's and a party's members are its players' hashes.
async fn the_same_player_hashes_differently_in_each_project(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("pro").await;
    let (q, q_key) = t.project("pro").await;
    for (project, key) in [(&p, &key), (&q, &q_key)] {
        t.mode(project, key, recorded("duel")).await;
        let (_, token) = t
            .ticket_ok(
                project,
                key,
                json!({"gameMode": "duel", "playerId": "alice", "attributes": {"mmr": 1500},
                       "party": {"id": "pty_1", "members": ["alice", "bob"]}}),
            )
            .await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    }
    let stored = rows(&t, 2).await;
    let of = |project: &str| {
        stored
            .iter()
            .find(|r| r.project_id == project)
            .cloned()
            .unwrap()
    };
    let (in_p, in_q) = (of(&p), of(&q));
    assert_ne!(in_p.player_hash, in_q.player_hash, "alice links projects");
    assert_ne!(in_p.party_hash, in_q.party_hash, "pty_1 links projects");
    assert_ne!(in_p.party_members, in_q.party_members);
    let hasher = IdHasher::new(RECORDING_KEY.as_bytes()).unwrap();
    for (project, row) in [(&p, &in_p), (&q, &in_q)] {
        let worker = hasher.end_row(project, "duel", "alice", "matched".into(), 0);
        assert_eq!(worker.player_hash, row.player_hash, "the worker's hash");
        let members = row.party_members.as_deref().unwrap();
        assert!(
            members.starts_with(&format!("{}|", row.player_hash)),
            "{members} starts with alice's hash {}",
            row.player_hash
        );
    }
}

/// A project deleted while its rows wait in the writer loses those rows
/// only: the other projects' rows of the same batch are stored.
async fn a_deleted_projects_queued_rows_leave_the_others_stored(pools: Pools) {
    use matchplane_store::pool::EndOutcome;
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("pro").await;
    let (q, q_key) = t.project("pro").await;
    let mut tickets = Vec::new();
    for (project, key) in [(&p, &key), (&q, &q_key)] {
        t.mode(project, key, duel("duel")).await;
        let (id, _) = t
            .ticket_ok(
                project,
                key,
                json!({"gameMode": "duel", "playerId": "alice", "attributes": {"mmr": 1500}}),
            )
            .await;
        tickets.push(t.play.tickets.get(project, &id).await.unwrap().unwrap());
    }
    // One batch, written when the recorder goes.
    let (recorder, metrics) = unhurried_recorder(&t);
    let now = matchplane_api::play::unix_now();
    recorder.start(&tickets[0], now, None);
    recorder.start(&tickets[1], now, None);
    recorder.end(&tickets[0], &EndOutcome::Cancelled, now + 1.0);
    recorder.end(&tickets[1], &EndOutcome::Cancelled, now + 1.0);
    let deleted = t
        .call(
            Method::DELETE,
            &format!("/v1/projects/{q}"),
            Some(&format!("Bearer {}", crate::harness::OPERATOR)),
            None,
        )
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT, "{}", deleted.body);
    drop(recorder);

    let stored = rows(&t, 2).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let stored_again = search_recording::Entity::find().all(&t.db).await.unwrap();
    assert_eq!(stored.len(), 2, "{stored:?}");
    assert_eq!(stored_again.len(), 2, "{stored_again:?}");
    assert!(stored.iter().all(|r| r.project_id == p), "{stored:?}");
    let text = metrics.handle().render();
    assert!(
        text.contains("matchplane_recording_written_total 2"),
        "{text}"
    );
    assert!(
        !text.lines().any(
            |l| l.starts_with("matchplane_recording_write_failed_total ") && !l.ends_with(" 0")
        ),
        "{text}"
    );
}

/// A stopping server flushes the recorder once its sockets' searches have
/// ended (`serve_on`): the flush returns once the rows queued before it
/// (those cancels) are stored, long before the batch's own deadline.
async fn a_flush_stores_every_row_queued_before_it(pools: Pools) {
    use matchplane_store::pool::EndOutcome;
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("pro").await;
    t.mode(&p, &key, duel("duel")).await;
    let (id, _) = t
        .ticket_ok(
            &p,
            &key,
            json!({"gameMode": "duel", "playerId": "alice", "attributes": {"mmr": 1500}}),
        )
        .await;
    let ticket = t.play.tickets.get(&p, &id).await.unwrap().unwrap();
    let (recorder, _) = unhurried_recorder(&t);
    let now = matchplane_api::play::unix_now();
    recorder.start(&ticket, now, None);
    recorder.end(&ticket, &EndOutcome::Cancelled, now + 1.0);
    assert!(recorder.flush(Duration::from_secs(5)).await);
    let stored = sea_orm::PaginatorTrait::count(search_recording::Entity::find(), &t.db)
        .await
        .unwrap();
    assert_eq!(stored, 2);
    // Nothing queued: at once.
    assert!(recorder.flush(Duration::from_secs(5)).await);
}

/// A recorder of `t`'s database whose batches wait ten minutes (16 rows at
/// most): a row is stored only when the recorder goes or is flushed. With
/// the metrics recorder it counts in.
fn unhurried_recorder(
    t: &TestApp,
) -> (
    matchplane_api::recording::Recorder,
    metrics_exporter_prometheus::PrometheusRecorder,
) {
    use matchplane_api::recording::{Recorder, RecorderSettings};
    let recorder = Recorder::new(RecorderSettings {
        capacity: 16,
        batch_rows: 100,
        flush_every: Duration::from_secs(600),
    });
    let metrics = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
    recorder.attach(t.db.clone(), Some(RECORDING_KEY), &metrics);
    (recorder, metrics)
}
