//! The record tables against their declarations: headers, column types, the conversions the CSV and the
//! arrays have always made (records must stay bit-identical), and the `transport` label.

use super::*;
use crate::units::US;

fn records() -> Records {
    let mut r = Records::default();
    r.meta.node_names = vec!["h0".into(), "h1".into(), "sw0".into()];
    r.meta.tags = vec!["".into(), "query".into()];
    r.meta.transports = vec!["tcp:dctcp".into(), "tcp:reno+ecn".into()];
    let flow = FlowRow {
        flow_id: 0,
        src: 0,
        dst: 1,
        size: 1500,
        tag: 1,
        transport: 1,
        start: 2 * US,
        finish: Some(7 * US + 500_000),
        ideal_fct: 2 * US,
        standalone_fct: 3 * US,
        base_rtt: 1_234_567,
        retransmits: 2,
        timeouts: 1,
        ce_marks: 3,
        ue_marks: 4,
    };
    let long = FlowRow { flow_id: 1, size: u64::MAX, tag: 0, transport: 0, finish: None, ideal_fct: Time::MAX, standalone_fct: Time::MAX, ..flow.clone() };
    r.flows = vec![flow, long];
    r.queues = vec![QueueRow { time: 100 * US, node: 2, port: 1, queue: 0, bytes: 3000, packets: 2, marks: 1, drops: 0 }];
    r.links = vec![LinkRow { time: 100 * US, node: 2, port: 1, tx_bytes: 125_000, utilization: 0.1 }];
    r.flow_trace =
        vec![TraceRow { time: 10 * US, flow_id: 0, cwnd_bytes: 14_600.0, rate_bps: 1e9, alpha: f64::NAN, srtt: 12_500_000, delivered_bytes: 9000 }];
    r.controller_steps = vec![ControlRow { time: 5 * US, node: 2, port: 0, queue: 0, action: "dctcp_red Params { threshold: 20000 }".into(), reward: 0.5, epsilon: 0.1, loss: f64::NAN, features: "0.1 0.2".into() }];
    r.rtt_samples = vec![RttRow { time: 20 * US, flow_id: 0, rtt: 12_345_678 }];
    r.pauses = vec![PauseRow { time: 7 * US, node: 2, port: 1, priority: 3, pause: true, sent: false }];
    r.ports = vec![PortRow {
        node: 2,
        port: 1,
        tx_bytes: 1500,
        ce_marks: 1,
        ue_marks: 0,
        drops: 2,
        paused: 3 * US,
        pause_frames_sent: 4,
        pause_frames_received: 5,
        credit_stall: 0,
    }];
    r.port_states = vec![PortStateRow { time: 9 * US, node: 2, port: 1, queue: 3, state: crate::aqm::tcd::Ternary::Undetermined }];
    r.jobs = vec![
        JobRow { job_id: 0, entry: 1, kind: "write", start: 4 * US, finish: Some(10 * US + 250_000), flows: 3, bytes: 8192 },
        JobRow { job_id: 1, entry: 1, kind: "read", start: 6 * US, finish: None, flows: 1, bytes: 64 },
    ];
    r
}

fn csv(t: &Table, r: &Records) -> String {
    let mut v = Vec::new();
    t.write_csv(r, &mut v).unwrap();
    String::from_utf8(v).unwrap()
}

/// Fields of a CSV line, commas inside quotes not counting.
fn fields(line: &str) -> usize {
    1 + line.split('"').step_by(2).map(|s| s.matches(',').count()).sum::<usize>()
}

#[test]
fn csv_header_is_the_declared_column_names() {
    let r = records();
    for t in &TABLES {
        let names: Vec<&str> = t.columns().iter().map(|c| c.name).collect();
        let text = csv(t, &r);
        assert_eq!(text.lines().next().unwrap(), names.join(","), "{}", t.name);
        for line in text.lines().skip(1) {
            assert_eq!(fields(line), names.len(), "{}: {line}", t.name);
        }
    }
    assert_eq!(queue_header(), "time_us,node,port,queue,bytes,packets,marks,drops");
}

#[test]
fn existing_columns_keep_their_order_and_new_ones_come_last() {
    let header = |n: &str| table(n).unwrap().columns().iter().map(|c| c.name).collect::<Vec<_>>().join(",");
    assert_eq!(
        header("flows"),
        "flow_id,src,dst,size,tag,start_us,finish_us,fct_us,ideal_fct_us,standalone_fct_us,slowdown,retransmits,timeouts,finished,base_rtt_us,transport,ce_marks,ue_marks"
    );
    assert_eq!(header("links"), "time_us,node,port,tx_bytes,utilization");
    assert_eq!(header("flow_trace"), "time_us,flow_id,cwnd_bytes,rate_bps,alpha,srtt_us,delivered_bytes");
    assert_eq!(header("controller_steps"), "time_us,node,port,queue,action,reward,epsilon,loss,features");
    let names: Vec<&str> = TABLES.iter().map(|t| t.name).collect();
    assert_eq!(names, ["flows", "queues", "links", "flow_trace", "controller_steps", "rtt_samples", "pauses", "ports", "port_states", "jobs"]);
    assert_eq!(header("jobs"), "job_id,entry,kind,start_us,finish_us,duration_us,flows,bytes,finished");
    assert_eq!(header("port_states"), "time_us,node,port,queue,state");
    assert_eq!(header("pauses"), "time_us,node,port,priority,event,direction");
    assert_eq!(
        header("ports"),
        "node,port,tx_bytes,ce_marks,ue_marks,drops,paused_us,pause_frames_sent,pause_frames_received,credit_stall_us"
    );
}

#[test]
fn every_column_reads_as_its_declared_type() {
    let r = records();
    for t in &TABLES {
        let data = t.data(&r);
        assert_eq!(data.len(), t.columns().len());
        for (c, d) in data {
            let ty = match d {
                ColumnData::I64(_) => Ty::Int,
                ColumnData::F64(_) => Ty::Float,
                ColumnData::Bool(_) => Ty::Bool,
                ColumnData::Str(_) => Ty::Str,
            };
            assert_eq!(ty, c.ty, "{}.{}", t.name, c.name);
            assert!(!d.is_empty(), "{}.{}", t.name, c.name);
            assert!(!c.meaning.is_empty() && c.meaning.ends_with('.'), "{}.{}", t.name, c.name);
        }
    }
}

#[test]
fn flows_rows_show_names_and_the_conversions_of_old() {
    let r = records();
    let text = csv(&TABLES[0], &r);
    let rows: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(rows[0], "0,0,1,1500,query,2,7.5,5.5,2,3,2.75,2,1,true,1.234567,tcp:reno+ecn,3,4");
    assert_eq!(rows[1], "1,0,1,inf,,2,NaN,NaN,18446744073709.55,18446744073709.55,NaN,2,1,false,1.234567,tcp:dctcp,3,4");
    let cols = r.table("flows").unwrap();
    let get = |n: &str| cols.iter().find(|(c, _)| c.name == n).unwrap().1.clone();
    assert_eq!(get("transport"), ColumnData::Str(vec!["tcp:reno+ecn".into(), "tcp:dctcp".into()]));
    assert_eq!(get("tag"), ColumnData::Str(vec!["query".into(), "".into()]));
    let ColumnData::F64(size) = get("size") else { panic!() };
    assert_eq!(size, [1500.0, f64::INFINITY]);
    // Arrays say +inf where the CSV has always written Time::MAX in µs.
    let ColumnData::F64(ideal) = get("ideal_fct_us") else { panic!() };
    assert_eq!(ideal, [2.0, f64::INFINITY]);
    let ColumnData::F64(fct) = get("fct_us") else { panic!() };
    assert!(fct[0] == 5.5 && fct[1].is_nan());
    assert_eq!(get("finished"), ColumnData::Bool(vec![true, false]));
    assert!(r.table("no_such_table").is_none());
}

#[test]
fn other_tables_show_node_names_and_quote_commas() {
    let r = records();
    let lines = |n: &str| csv(table(n).unwrap(), &r).lines().nth(1).unwrap().to_string();
    assert_eq!(lines("queues"), "100,sw0,1,0,3000,2,1,0");
    assert_eq!(lines("links"), "100,sw0,1,125000,0.1");
    assert_eq!(lines("flow_trace"), "10,0,14600,1000000000,NaN,12.5,9000");
    assert_eq!(lines("controller_steps"), "5,sw0,0,0,dctcp_red Params { threshold: 20000 },0.5,0.1,NaN,0.1 0.2");
    assert_eq!(lines("rtt_samples"), "20,0,12.345678");
    let mut quoted = r;
    quoted.controller_steps[0].action = "red \"x\", y".into();
    assert_eq!(csv(table("controller_steps").unwrap(), &quoted).lines().nth(1).unwrap(), "5,sw0,0,0,\"red \"\"x\"\", y\",0.5,0.1,NaN,0.1 0.2");
}

#[test]
fn streamed_queue_rows_equal_the_table() {
    let r = records();
    let mut v = Vec::new();
    writeln!(v, "{}", queue_header()).unwrap();
    write_queue_row(&mut v, &r.queues[0], &r.meta.node_names).unwrap();
    assert_eq!(String::from_utf8(v).unwrap(), csv(table("queues").unwrap(), &r));
}

#[test]
fn write_dir_writes_every_table() {
    let dir = std::env::temp_dir().join(format!("dcnlab-records-{}", std::process::id()));
    records().write_dir(&dir).unwrap();
    for t in &TABLES {
        let text = std::fs::read_to_string(dir.join(format!("{}.csv", t.name))).unwrap();
        assert_eq!(text, csv(t, &records()));
    }
    assert!(dir.join("meta.json").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn jobs_rows_give_duration_and_nan_for_unfinished() {
    let r = records();
    let t = TABLES.iter().find(|t| t.name == "jobs").unwrap();
    let text = csv(t, &r);
    let rows: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(rows, ["0,1,write,4,10.25,6.25,3,8192,true", "1,1,read,6,NaN,NaN,1,64,false"]);
}
