//! Simulation throughput: thread accesses simulated per second on the reference kernels
//! (star1 at 256³ and star4 at 640×512×512, both on the H200 config, block 32×8×4).
//! Run with `cargo bench --bench throughput` (about 10 minutes: criterion's minimum of 10
//! samples of a 4.4·10⁹-access kernel); results go in docs/performance.md.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use gputraffic::input::hw::HwConfig;
use gputraffic::launch::{Launch, LaunchRequest};
use gputraffic::sim::{SimOptions, simulate};
use std::time::Duration;

fn bench_kernel(c: &mut Criterion, kernel: &str, domain: [i64; 3]) {
    let hw = HwConfig::load("h200").unwrap();
    let k = gputraffic::input::trace::load(kernel).unwrap();
    let req = LaunchRequest {
        block: Some([32, 8, 4]),
        domain: Some(domain),
        set: vec![],
    };
    let launch = Launch::new(&k, &hw, &req).unwrap();
    let opts = SimOptions::default();
    let accesses = simulate(&launch, &hw, &opts).unwrap().thread_accesses;
    let mut group = c.benchmark_group("simulate");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(1));
    group.throughput(Throughput::Elements(accesses));
    group.bench_function(
        format!("{kernel} {}x{}x{}", domain[0], domain[1], domain[2]),
        |b| b.iter(|| simulate(&launch, &hw, &opts).unwrap()),
    );
    group.finish();
}

fn throughput(c: &mut Criterion) {
    bench_kernel(c, "star1", [256, 256, 256]);
    bench_kernel(c, "star4", [640, 512, 512]);
}

criterion_group!(benches, throughput);
criterion_main!(benches);
