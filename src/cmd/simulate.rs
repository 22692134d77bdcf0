//! `matchplane simulate`: reads the scenario (and its `arrivalsCsv`, or a
//! replay of real games), runs the pure simulator, prints the report.
//! Exit codes: 0 ok, 2 invalid scenario (documented codes on stderr), 1 IO error.

use clap::{Args, ValueEnum};
use matchplane_api::extract::parse_object;
use matchplane_api::routes::simulate::read_scenario;
use matchplane_matchmaker::simulate::{
    arrivals_csv_text, assign_declines, check_guard, compare, errors_within, lichess_arrivals,
    parse_guard, render_compare_table, render_table, Report, Scenario, ScenarioError, Spread,
};
use matchplane_matchmaker::{Code, FieldError};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Output format of the report.
#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    /// The JSON report (docs/simulate.md).
    Json,
    /// The same, readable.
    Table,
}

/// Arguments of `matchplane simulate`.
#[derive(Args)]
pub struct SimulateArgs {
    /// Scenario file (docs/simulate.md). `arrivalsCsv` in it is relative to the file.
    #[arg(long, env = "MATCHPLANE_SCENARIO")]
    pub scenario: PathBuf,
    /// Output format.
    #[arg(
        long,
        value_enum,
        default_value = "json",
        env = "MATCHPLANE_SIMULATE_FORMAT"
    )]
    pub format: Format,
    /// Replay real games: a Lichess CSV (the repository carries
    /// data/lichess/lichess-games.csv)
    /// whose players arrive in the games' order with their real ratings.
    #[arg(long, env = "MATCHPLANE_REPLAY_GAMES_CSV")]
    pub lichess: Option<PathBuf>,
    /// With --lichess: how many games to replay, from the first (`all`, or
    /// a number).
    #[arg(
        long,
        default_value = "all",
        value_parser = games,
        env = "MATCHPLANE_REPLAY_GAMES"
    )]
    pub games: usize,
    /// With --lichess: arrivals per second of virtual time.
    #[arg(long, default_value_t = 20.0, env = "MATCHPLANE_REPLAY_RATE")]
    pub rate: f64,
    /// A second game mode body (JSON file) to run on the same arrivals and
    /// seed: prints `{"a": report, "b": report, "diff": {...}}` (or one
    /// side-by-side table). Overrides the scenario's `compare`.
    #[arg(long, env = "MATCHPLANE_SIMULATE_COMPARE")]
    pub compare: Option<PathBuf>,
    /// With a comparison: figures the second mode must not worsen by more
    /// than --guard-tolerance, e.g. `waitP90,mmrSpreadP50`; exit 3 when it
    /// does (`CONFIG_REGRESSION`).
    #[arg(long, env = "MATCHPLANE_SIMULATE_GUARD")]
    pub guard: Option<String>,
    /// With --guard: how much a guarded figure may worsen (0.1: 10 %).
    #[arg(
        long,
        default_value_t = 0.1,
        env = "MATCHPLANE_SIMULATE_GUARD_TOLERANCE"
    )]
    pub guard_tolerance: f64,
    /// In a mode with `acceptance`: the share (0 to 1) of arrivals, drawn
    /// with the scenario's seed, that decline their proposals (replacing
    /// their `answer`); 0 leaves every arrival's own.
    #[arg(long, default_value_t = 0.0, env = "MATCHPLANE_SIMULATE_DECLINE_SHARE")]
    pub decline_share: f64,
    /// With --decline-share: seconds into the proposal the decline comes, 0
    /// or more.
    #[arg(long, default_value_t = 3.0, env = "MATCHPLANE_SIMULATE_DECLINE_AFTER")]
    pub decline_after: f64,
    /// With --format table: how many matches to list.
    #[arg(long, default_value_t = 20, env = "MATCHPLANE_TABLE_MATCHES")]
    pub table_matches: usize,
}

/// `--games`: `all` (every game of the file) or a number of games.
fn games(value: &str) -> Result<usize, String> {
    if value.eq_ignore_ascii_case("all") {
        return Ok(usize::MAX);
    }
    value
        .parse()
        .map_err(|_| format!("`{value}` is not `all` or a number of games"))
}

/// The real pairings against the simulated ones, for a replay.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReplayComparison {
    games: usize,
    real_pairing_gap: Spread,
    matched_gap: Spread,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Output<'a> {
    #[serde(flatten)]
    report: &'a Report,
    #[serde(skip_serializing_if = "Option::is_none")]
    replay: Option<&'a ReplayComparison>,
}

enum Failure {
    Invalid(ScenarioError),
    Io(String),
    /// The guard refused the compared mode: the output, exit 3.
    Refused(String),
}

/// Runs the subcommand and returns the process exit code.
pub fn run(args: &SimulateArgs) -> ExitCode {
    match simulate(args) {
        Ok(text) => super::print_stdout(&(text + "\n")),
        Err(Failure::Invalid(e)) => {
            let errors = matchplane_api::problem::listed(e.0);
            let body =
                serde_json::json!({ "code": errors.first().map(|f| f.code), "errors": errors });
            super::say_err(body);
            ExitCode::from(2)
        }
        Err(Failure::Io(message)) => {
            super::report_error(message);
            ExitCode::from(1)
        }
        Err(Failure::Refused(text)) => {
            let _ = super::print_stdout(&(text + "\n"));
            ExitCode::from(3)
        }
    }
}

fn read(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map_err(|e| Failure::Io(format!("cannot read {}: {e}", path.display())))
}

/// A scenario file read as the API reads the body of its simulate route:
/// every shape error by its path, in the API's words; a text that is not
/// JSON is named by its line and column. `--compare`'s mode, when given,
/// stands in the scenario's `compare` (the flag wins), so the arrivals are
/// checked against both modes as the field's are.
fn read_scenario_file(args: &SimulateArgs) -> Result<Scenario, Failure> {
    let mut body = read_json(&read(&args.scenario)?).map_err(Failure::Invalid)?;
    if let Some(path) = &args.compare {
        let other = read_json(&read(path)?)
            .map_err(|e| Failure::Invalid(ScenarioError(errors_within("compare", e.0))))?;
        if let Some(object) = body.as_object_mut() {
            object.insert("compare".into(), other);
        }
    }
    read_scenario(body).map_err(|errors| Failure::Invalid(ScenarioError(errors)))
}

/// A JSON file's text read as the API reads a request body
/// (`parse_object`): a key given twice, a NUL character or text that is
/// not one JSON object refused with the API's field and words.
fn read_json(text: &str) -> Result<serde_json::Value, ScenarioError> {
    parse_object(text.as_bytes()).map_err(|e| {
        ScenarioError(
            e.problem()
                .errors
                .into_iter()
                .map(|f| FieldError::new(f.field, code_named(&f.code), f.message))
                .collect(),
        )
    })
}

/// The code named `name`; the API's body reading answers only
/// `VALIDATION_ERROR`.
fn code_named(name: &str) -> Code {
    serde_json::from_value(serde_json::Value::String(name.to_owned()))
        .unwrap_or(Code::ValidationError)
}

/// The flags' values outside docs/configuration.md's ranges, each on its
/// flag's name (`declineShare`, `declineAfter`, `rate`), all at once.
fn check_flags(args: &SimulateArgs) -> Result<(), Failure> {
    let mut errors = Vec::new();
    let mut check = |valid: bool, field: &str, message: &str| {
        if !valid {
            errors.push(FieldError::new(field, Code::ValidationError, message));
        }
    };
    check(
        (0.0..=1.0).contains(&args.decline_share),
        "declineShare",
        "--decline-share is a fraction from 0 to 1",
    );
    check(
        args.decline_after.is_finite() && args.decline_after >= 0.0,
        "declineAfter",
        "--decline-after is a number of seconds >= 0",
    );
    check(
        args.rate.is_finite() && args.rate > 0.0,
        "rate",
        "--rate is a positive number of arrivals per second",
    );
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Failure::Invalid(ScenarioError(errors)))
    }
}

fn simulate(args: &SimulateArgs) -> Result<String, Failure> {
    check_flags(args)?;
    let mut scenario = read_scenario_file(args)?;
    if let Some(csv) = scenario.arrivals_csv.clone() {
        let base = args.scenario.parent().unwrap_or(Path::new("."));
        let path = base.join(&csv);
        let bytes = std::fs::read(&path).map_err(|e| {
            Failure::Invalid(ScenarioError(vec![FieldError::new(
                "arrivalsCsv",
                Code::ValidationError,
                format!("cannot read {}: {e}", path.display()),
            )]))
        })?;
        // A line that is not UTF-8 text is named as its row.
        let text = arrivals_csv_text(&bytes, "arrivalsCsv").map_err(Failure::Invalid)?;
        scenario
            .add_arrivals_csv(text, "arrivalsCsv")
            .map_err(Failure::Invalid)?;
    }
    let mut replay_gaps = None;
    if let Some(path) = &args.lichess {
        let replay =
            lichess_arrivals(&read(path)?, args.games, args.rate).map_err(Failure::Invalid)?;
        scenario
            .add_events(replay.events, "games")
            .map_err(Failure::Invalid)?;
        replay_gaps = Some(replay.real_gaps);
    }
    if args.decline_share != 0.0 {
        assign_declines(
            &mut scenario.events,
            args.decline_share,
            args.decline_after,
            scenario.seed,
        );
    }
    let guard = match &args.guard {
        Some(list) => {
            let invalid = |f: FieldError| Failure::Invalid(ScenarioError(vec![f]));
            if scenario.compare.is_none() {
                return Err(invalid(FieldError::new(
                    "guard",
                    Code::ValidationError,
                    "--guard needs a second mode: --compare or the scenario's compare",
                )));
            }
            if !(0.0..=10.0).contains(&args.guard_tolerance) {
                return Err(invalid(FieldError::new(
                    "guardTolerance",
                    Code::ValidationError,
                    "the guard tolerance is a fraction from 0 to 10",
                )));
            }
            Some(parse_guard(list, "guard").map_err(invalid)?)
        }
        None => None,
    };
    if let Some(other) = scenario.compare.clone() {
        let mut comparison = compare(&scenario, &other);
        comparison.guard = guard
            .as_deref()
            .map(|g| check_guard(&comparison, g, args.guard_tolerance));
        let text = match args.format {
            Format::Json => {
                serde_json::to_string_pretty(&comparison).map_err(|e| Failure::Io(e.to_string()))?
            }
            Format::Table => render_compare_table(&comparison),
        };
        return match &comparison.guard {
            Some(g) if !g.passed => Err(Failure::Refused(text)),
            _ => Ok(text),
        };
    }
    let report = matchplane_matchmaker::simulate::run(&scenario);
    let replay = replay_gaps.map(|gaps| ReplayComparison {
        games: gaps.len(),
        real_pairing_gap: Spread::of(&gaps),
        matched_gap: Spread::of(
            &report
                .matches
                .iter()
                .filter_map(|m| m.mmr_spread)
                .collect::<Vec<_>>(),
        ),
    });
    Ok(match args.format {
        Format::Json => serde_json::to_string_pretty(&Output {
            report: &report,
            replay: replay.as_ref(),
        })
        .map_err(|e| Failure::Io(e.to_string()))?,
        Format::Table => {
            let mut text = render_table(&report, args.table_matches);
            if let Some(r) = &replay {
                let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
                text.push_str(&format!(
                    "\nreplay of {} real games: rating gap of the real pairings p50 {} p90 {} max {}; of matchplane's matches p50 {} p90 {} max {}\n",
                    r.games,
                    f(r.real_pairing_gap.p50),
                    f(r.real_pairing_gap.p90),
                    f(r.real_pairing_gap.max),
                    f(r.matched_gap.p50),
                    f(r.matched_gap.p90),
                    f(r.matched_gap.max)
                ));
            }
            text
        }
    })
}
