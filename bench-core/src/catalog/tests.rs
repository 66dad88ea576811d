use super::*;

#[test]
fn strategy_names_parse() {
    for s in Strategy::ALL {
        assert_eq!(s.name().parse::<Strategy>().unwrap(), s);
    }
    assert_eq!(
        "fast".parse::<Strategy>().unwrap_err().to_string(),
        "unknown strategy \"fast\" (known: inline, spawn_blocking, interact, worker, spin, block_in_place)"
    );
}

#[test]
fn subjects_name_their_backend_and_harness() {
    assert_eq!(
        Subject::Middleware(Strategy::Spin).backend(),
        "rusqlite worker pool"
    );
    assert_eq!(
        Subject::Middleware(Strategy::Inline).backend(),
        "deadpool-sqlite"
    );
    assert_eq!(Subject::Pool(Pool::Deadpool).strategy(), None);
    assert_eq!(Subject::SqlxPostgres.harness(), Harness::Sqlx);
    let spec = BenchSpec::whole("m", Subject::Middleware(Strategy::Worker), "op", "about");
    let json = serde_json::to_value(spec).unwrap();
    assert_eq!(json["backend"], "rusqlite worker pool");
    assert_eq!(json["strategy"], "worker");
    assert_eq!(json["harness"], "core");
}
