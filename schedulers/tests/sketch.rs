use stealbench_schedulers::serial::Serial;
use stealbench_schedulers::*;

fn fib_sf<W: Worker>(w: &W, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    w.scope(|s| {
        let x = s.future(w, move |_, w| fib_sf(w, n - 1));
        let y = fib_sf(w, n - 2);
        x.get(w) + y
    })
}

fn sum_into<W: Worker>(w: &W, src: &[u64], dst: &mut [u64]) {
    if src.len() <= 4 {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = s * 2;
        }
        return;
    }
    let mid = src.len() / 2;
    let (sa, sb) = src.split_at(mid);
    let (da, db) = dst.split_at_mut(mid);
    w.scope(|s| {
        s.spawn(w, move |_, w| sum_into(w, sa, da));
        let f = s.shared_future(w, move |_, w| {
            sum_into(w, sb, db);
            7u32
        });
        let g = f.clone();
        s.spawn(w, move |_, w| assert_eq!(*g.get(w), 7));
        assert_eq!(*f.get(w), 7);
    });
}

fn fib_async<'s, S: Spawner<'s>>(s: S, n: u64) -> BoxFuture<'s, u64> {
    Box::pin(async move {
        if n < 2 {
            return n;
        }
        let a = s.spawn(fib_async(s.clone(), n - 1));
        let b = fib_async(s, n - 2).await;
        a.await + b
    })
}

fn double_async<'s, S: Spawner<'s>>(s: S, src: &'s [u64], dst: &'s mut [u64]) -> BoxFuture<'s, ()> {
    Box::pin(async move {
        if src.len() <= 4 {
            for (d, x) in dst.iter_mut().zip(src) {
                *d = x * 2;
            }
            return;
        }
        let mid = src.len() / 2;
        let (sa, sb) = src.split_at(mid);
        let (da, db) = dst.split_at_mut(mid);
        let h = s.spawn(double_async(s.clone(), sb, db));
        double_async(s, sa, da).await;
        h.await;
    })
}

#[test]
fn sketch() {
    let p = Serial::start(&PoolConfig::with_workers(1)).unwrap();
    assert_eq!(p.run(|w| fib_sf(w, 20)), 6765);
    let src: Vec<u64> = (0..100).collect();
    let mut dst = vec![0; 100];
    p.run(|w| sum_into(w, &src, &mut dst));
    assert_eq!(dst[99], 198);
    assert_eq!(p.run_async(|s| fib_async(s, 20)), 6765);
    let mut dst2 = vec![0; 100];
    p.run_async(|s| double_async(s, &src, &mut dst2));
    assert_eq!(dst2[99], 198);
}
