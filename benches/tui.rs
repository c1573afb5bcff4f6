//! A full redraw of each workbench tab at 200×60 (ratatui TestBackend, no terminal I/O).

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use kestrel::tui::files::{cloth_entries, sample_curves};
use kestrel::tui::{Action, App, Event, Tab};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

fn redraw(c: &mut Criterion) {
    let (curves, _) = sample_curves();
    let mut app = App::new(curves, String::new(), false);
    let scenes = cloth_entries(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
    app.update(Action::Event(Event::ClothScanned(scenes)));
    let mut terminal = match Terminal::new(TestBackend::new(200, 60)) {
        Ok(t) => t,
        Err(e) => panic!("test backend: {e}"),
    };
    let mut g = c.benchmark_group("redraw_200x60");
    g.sample_size(20);
    for tab in Tab::ALL {
        app.update(Action::GoTab(tab));
        g.bench_function(tab.title(), |b| {
            b.iter(|| {
                // a full redraw: clear the previous buffer so every cell is drawn again
                let _ = terminal.clear();
                let _ = terminal.draw(|f| f.render_widget(black_box(&app), f.area()));
            })
        });
    }
    g.finish();
}

criterion_group!(benches, redraw);
criterion_main!(benches);
