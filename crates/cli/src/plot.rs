//! The frontier as an SVG (Cosine Figure 5): throughput against monthly cost, Cosine per provider and the
//! fixed designs.

use anyhow::{anyhow, Result};
use cosine_search::continuum::{Config, SearchResult};
use plotters::prelude::*;

fn series(configs: &[Config]) -> Vec<(f64, f64)> {
    configs
        .iter()
        .filter(|c| c.throughput.is_finite() && c.throughput > 0.0)
        .map(|c| (c.monthly_usd(), c.throughput))
        .collect()
}

/// Writes the plot to `path`.
pub fn write_svg(path: &str, r: &SearchResult, title: &str, budget: f64) -> Result<()> {
    let mut all: Vec<(f64, f64)> = series(&r.frontier);
    for (_, b) in &r.baselines {
        all.extend(series(b));
    }
    if all.is_empty() {
        return Err(anyhow!(
            "nothing to plot: no configuration fits the cost range"
        ));
    }
    let (x0, x1) = all
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let (y0, y1) = all
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.1), b.max(p.1)));
    let root = SVGBackend::new(path, (960, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("plot: {e}"))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(
            (x0 * 0.8..x1 * 1.25).log_scale(),
            (y0 * 0.5..y1 * 2.0).log_scale(),
        )
        .map_err(|e| anyhow!("plot: {e}"))?;
    chart
        .configure_mesh()
        .x_desc("monthly cost (USD)")
        .y_desc("throughput (ops/s)")
        .draw()
        .map_err(|e| anyhow!("plot: {e}"))?;
    let colors = [
        RGBColor(31, 119, 180),
        RGBColor(44, 160, 44),
        RGBColor(148, 103, 189),
    ];
    for (i, (provider, f)) in r.per_provider.iter().enumerate() {
        let pts = series(f);
        let color = colors[i % colors.len()];
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(|e| anyhow!("plot: {e}"))?
            .label(format!("Cosine on {provider}"))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart
            .draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled())))
            .map_err(|e| anyhow!("plot: {e}"))?;
    }
    let base_colors = [
        RGBColor(214, 39, 40),
        RGBColor(255, 127, 14),
        RGBColor(127, 127, 127),
    ];
    for (i, (b, f)) in r.baselines.iter().enumerate() {
        let color = base_colors[i % base_colors.len()];
        chart
            .draw_series(LineSeries::new(series(f), color.stroke_width(2)))
            .map_err(|e| anyhow!("plot: {e}"))?
            .label(b.name().to_string())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(budget, y0 * 0.5), (budget, y1 * 2.0)],
            BLACK.stroke_width(1),
        )))
        .map_err(|e| anyhow!("plot: {e}"))?;
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(|e| anyhow!("plot: {e}"))?;
    root.present().map_err(|e| anyhow!("plot: {e}"))?;
    Ok(())
}

/// Writes a grouped bar chart as SVG: one group per category (x), one bar per series in each group
/// (`cosine validate --plot`: accuracy per workload and class; `cosine calibrate --plot`: φ per operation
/// and class). Missing values are NaN and leave a gap.
pub fn write_bars(
    path: &str,
    title: &str,
    y_desc: &str,
    categories: &[String],
    series: &[(String, Vec<f64>)],
    y_range: std::ops::Range<f64>,
) -> Result<()> {
    if categories.is_empty() || series.is_empty() {
        return Err(anyhow!("nothing to plot"));
    }
    let err = |e: &dyn std::fmt::Display| anyhow!("plot {path}: {e}");
    let root = SVGBackend::new(path, (960, 520)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let n = categories.len();
    let labels = categories.to_vec();
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(0f64..n as f64, y_range.clone())
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n * 2 + 1)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            if (x - i as f64 - 0.5).abs() < 1e-6 && i < labels.len() {
                labels[i].clone()
            } else {
                String::new()
            }
        })
        .y_desc(y_desc)
        .draw()
        .map_err(|e| err(&e))?;
    let colors = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
    ];
    let width = 0.8 / series.len() as f64;
    for (s, (name, values)) in series.iter().enumerate() {
        let color = colors[s % colors.len()];
        let bars = values
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite())
            .map(|(g, v)| {
                let x0 = g as f64 + 0.1 + s as f64 * width;
                let v = v.clamp(y_range.start, y_range.end);
                Rectangle::new(
                    [(x0, y_range.start.max(0.0)), (x0 + width * 0.9, v)],
                    color.filled(),
                )
            });
        chart
            .draw_series(bars)
            .map_err(|e| err(&e))?
            .label(name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
