use super::*;
use bench_core::knobs::resolve;

#[test]
fn connections_run_with_the_settings_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    for overrides in [
        vec![],
        vec![
            ("journal_mode", "delete"),
            ("synchronous", "full"),
            ("cache_size", "4000"),
            ("mmap_size", "1m"),
            ("sqlite_mutex", "full"),
        ],
        vec![("journal_mode", "memory"), ("synchronous", "off")],
    ] {
        let o: Vec<(String, String)> = overrides
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let s = SqliteSettings::from_knobs(&resolve(&settings::KNOBS, &|_| None, &o).unwrap());
        let conn = Connection::open_with_flags(&path, flags(&s)).unwrap();
        apply(&conn, &s).unwrap();
        assert_eq!(read_back(&conn), s.expected(), "{overrides:?}");
    }
}

#[test]
fn a_written_dataset_validates_and_holds_the_spec_rows() {
    let dir = tempfile::tempdir().unwrap();
    let key = DatasetKey::new("t", 50, 7);
    let ready = ensure(dir.path(), &key, &mut |_| {}).unwrap();
    validate(&ready.path, &key).unwrap();
    let rows = read_rows(&ready.path).unwrap();
    assert_eq!(rows.len(), 50);
    assert!(rows.iter().all(|r| *r == bench_core::dataset::row(r.id)));
    let conn = Connection::open(&ready.path).unwrap();
    assert_eq!(
        cached_lookup(&conn, 9).unwrap(),
        bench_core::dataset::row(9)
    );
}
