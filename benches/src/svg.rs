//! A grouped bar chart as SVG, like the reports' tables: one group per
//! workload, one bar per target.

pub struct Series {
    pub name: String,
    pub values: Vec<f64>,
}

const COLORS: [&str; 6] = [
    "#2b6cb0", "#c05621", "#2f855a", "#6b46c1", "#b7791f", "#718096",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

pub fn bar_chart(title: &str, y_label: &str, groups: &[String], series: &[Series]) -> String {
    let group_w = 40.0 + 22.0 * series.len() as f64;
    let left = 70.0;
    let top = 50.0;
    let plot_h = 300.0;
    let width = left + group_w * groups.len() as f64 + 160.0;
    let height = top + plot_h + 120.0;
    let max = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .fold(0.0f64, f64::max)
        .max(1.0);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"11\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{left}\" y=\"25\" font-size=\"15\" font-weight=\"bold\">{}</text>\n\
         <text x=\"15\" y=\"{}\" transform=\"rotate(-90 15 {})\">{}</text>\n",
        esc(title),
        top + plot_h / 2.0,
        top + plot_h / 2.0,
        esc(y_label)
    );
    for i in 0..=4 {
        let v = max * i as f64 / 4.0;
        let y = top + plot_h - plot_h * i as f64 / 4.0;
        out.push_str(&format!(
            "<line x1=\"{left}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{:.0}</text>\n",
            left + group_w * groups.len() as f64,
            left - 5.0,
            y + 4.0,
            v
        ));
    }
    for (g, name) in groups.iter().enumerate() {
        let gx = left + group_w * g as f64 + 20.0;
        for (s, ser) in series.iter().enumerate() {
            let v = ser.values.get(g).copied().unwrap_or(0.0);
            let h = plot_h * v / max;
            out.push_str(&format!(
                "<rect x=\"{}\" y=\"{}\" width=\"20\" height=\"{h}\" fill=\"{}\"><title>{}: {:.1}</title></rect>\n",
                gx + 22.0 * s as f64,
                top + plot_h - h,
                COLORS[s % COLORS.len()],
                esc(&ser.name),
                v
            ));
        }
        let cx = gx + 11.0 * series.len() as f64;
        out.push_str(&format!(
            "<text x=\"{cx}\" y=\"{}\" text-anchor=\"end\" transform=\"rotate(-35 {cx} {})\">{}</text>\n",
            top + plot_h + 15.0,
            top + plot_h + 15.0,
            esc(name)
        ));
    }
    for (s, ser) in series.iter().enumerate() {
        let x = left + group_w * groups.len() as f64 + 20.0;
        let y = top + 15.0 * s as f64;
        out.push_str(&format!(
            "<rect x=\"{x}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
            y - 9.0,
            COLORS[s % COLORS.len()],
            x + 15.0,
            y,
            esc(&ser.name)
        ));
    }
    out.push_str("</svg>\n");
    out
}
