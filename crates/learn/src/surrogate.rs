//! The surrogate: RTune's network (§3.2.3, Table 5), from a configuration to its outcomes.
//!
//! Inputs are a configuration's point (already in [0, 1], RTune's min-max scaling) and, optionally, one more
//! feature (the analytical model's predicted I/Os, scaled to [0, 1] over the training rows). Two shared layers
//! (inputs → 64 → 16, ReLU) feed one linear head per outcome; outcomes are standardised (RTune's StandardScaler)
//! and the loss is their mean squared error; AdamW. Built on candle (candle-nn's linear layers and AdamW);
//! the weights are initialised from a seeded generator, so training is repeatable.

use crate::{Error, Result};
use candle_core::{DType, Device, Tensor, Var, D};
use candle_nn::{AdamW, Linear, Module, Optimizer, ParamsAdamW};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// Training settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrainSpec {
    /// Passes over the rows (RTune: 300).
    pub epochs: usize,
    /// Rows per gradient step.
    pub batch: usize,
    /// AdamW's learning rate. RTune's is 0.0002 over 20,000 rows a workload; with a repository of hundreds of
    /// runs, 300 epochs of batches of 16 are a few thousand steps, and 0.001 is the default here.
    pub learning_rate: f64,
    /// Seed of the initial weights and the batch order.
    pub seed: u64,
}

impl Default for TrainSpec {
    fn default() -> Self {
        TrainSpec {
            epochs: 300,
            batch: 16,
            learning_rate: 1e-3,
            seed: 1,
        }
    }
}

/// A trained network with its output scaling.
pub struct Surrogate {
    layers: [Linear; 2],
    heads: Vec<Linear>,
    inputs: usize,
    y_mean: Vec<f64>,
    y_std: Vec<f64>,
}

fn err(e: candle_core::Error) -> Error {
    Error::Invalid(format!("surrogate: {e}"))
}

/// A linear layer with weights drawn uniformly in ±1/√fan_in (PyTorch's default) from `rng`.
fn layer(rng: &mut StdRng, fan_in: usize, fan_out: usize, vars: &mut Vec<Var>) -> Result<Linear> {
    let bound = 1.0 / (fan_in as f64).sqrt();
    let mut draw = |n: usize| -> Vec<f32> {
        (0..n)
            .map(|_| rng.random_range(-bound..bound) as f32)
            .collect()
    };
    let w = Var::from_vec(draw(fan_in * fan_out), (fan_out, fan_in), &Device::Cpu).map_err(err)?;
    let b = Var::from_vec(draw(fan_out), fan_out, &Device::Cpu).map_err(err)?;
    let l = Linear::new(w.as_tensor().clone(), Some(b.as_tensor().clone()));
    vars.push(w);
    vars.push(b);
    Ok(l)
}

fn matrix(rows: &[Vec<f64>], cols: usize) -> Result<Tensor> {
    let flat: Vec<f32> = rows
        .iter()
        .flat_map(|r| r.iter().map(|&x| x as f32))
        .collect();
    Tensor::from_vec(flat, (rows.len(), cols), &Device::Cpu).map_err(err)
}

impl Surrogate {
    /// Trains on rows of inputs `x` and outcomes `y` (every row the same widths).
    pub fn train(x: &[Vec<f64>], y: &[Vec<f64>], spec: TrainSpec) -> Result<Self> {
        let (n, inputs) = (x.len(), x.first().map_or(0, Vec::len));
        let outputs = y.first().map_or(0, Vec::len);
        if n < 2 || n != y.len() || inputs == 0 || outputs == 0 {
            return Err(Error::Invalid(format!(
                "the surrogate needs at least 2 rows with inputs and outcomes (got {n})"
            )));
        }
        let mut y_mean = vec![0.0; outputs];
        let mut y_std = vec![0.0; outputs];
        for j in 0..outputs {
            let col: Vec<f64> = y.iter().map(|r| r[j]).collect();
            let m = col.iter().sum::<f64>() / n as f64;
            let v = col.iter().map(|c| (c - m).powi(2)).sum::<f64>() / n as f64;
            y_mean[j] = m;
            y_std[j] = v.sqrt().max(1e-9);
        }
        let ys: Vec<Vec<f64>> = y
            .iter()
            .map(|r| {
                r.iter()
                    .enumerate()
                    .map(|(j, v)| (v - y_mean[j]) / y_std[j])
                    .collect()
            })
            .collect();
        let mut rng = StdRng::seed_from_u64(spec.seed);
        let mut vars = Vec::new();
        let layers = [
            layer(&mut rng, inputs, 64, &mut vars)?,
            layer(&mut rng, 64, 16, &mut vars)?,
        ];
        let heads = (0..outputs)
            .map(|_| layer(&mut rng, 16, 1, &mut vars))
            .collect::<Result<Vec<_>>>()?;
        let net = Surrogate {
            layers,
            heads,
            inputs,
            y_mean,
            y_std,
        };
        let mut opt = AdamW::new(
            vars,
            ParamsAdamW {
                lr: spec.learning_rate,
                ..Default::default()
            },
        )
        .map_err(err)?;
        let mut order: Vec<usize> = (0..n).collect();
        let batch = spec.batch.clamp(1, n);
        for _ in 0..spec.epochs {
            order.shuffle(&mut rng);
            for chunk in order.chunks(batch) {
                let bx: Vec<Vec<f64>> = chunk.iter().map(|&i| x[i].clone()).collect();
                let by: Vec<Vec<f64>> = chunk.iter().map(|&i| ys[i].clone()).collect();
                let pred = net.forward(&matrix(&bx, inputs)?)?;
                let target = matrix(&by, outputs)?;
                let loss = candle_nn::loss::mse(&pred, &target).map_err(err)?;
                opt.backward_step(&loss).map_err(err)?;
            }
        }
        Ok(net)
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let h = self.layers[0]
            .forward(x)
            .map_err(err)?
            .relu()
            .map_err(err)?;
        let h = self.layers[1]
            .forward(&h)
            .map_err(err)?
            .relu()
            .map_err(err)?;
        let outs = self
            .heads
            .iter()
            .map(|head| head.forward(&h))
            .collect::<candle_core::Result<Vec<_>>>()
            .map_err(err)?;
        Tensor::cat(&outs, D::Minus1).map_err(err)
    }

    /// Predicted outcomes of each row of inputs, in the outcomes' own units.
    pub fn predict(&self, x: &[Vec<f64>]) -> Result<Vec<Vec<f64>>> {
        if x.is_empty() {
            return Ok(Vec::new());
        }
        if x.iter().any(|r| r.len() != self.inputs) {
            return Err(Error::Invalid(format!(
                "the surrogate takes {} inputs a row",
                self.inputs
            )));
        }
        let out = self
            .forward(&matrix(x, self.inputs)?)?
            .to_dtype(DType::F64)
            .map_err(err)?
            .to_vec2::<f64>()
            .map_err(err)?;
        Ok(out
            .into_iter()
            .map(|r| {
                r.iter()
                    .enumerate()
                    .map(|(j, v)| v * self.y_std[j] + self.y_mean[j])
                    .collect()
            })
            .collect())
    }
}

/// Spearman's rank correlation of two equally long series (ties share their mean rank).
pub fn spearman(a: &[f64], b: &[f64]) -> f64 {
    fn ranks(v: &[f64]) -> Vec<f64> {
        let mut idx: Vec<usize> = (0..v.len()).collect();
        idx.sort_by(|&i, &j| v[i].total_cmp(&v[j]));
        let mut r = vec![0.0; v.len()];
        let mut i = 0;
        while i < idx.len() {
            let mut j = i;
            while j + 1 < idx.len() && v[idx[j + 1]] == v[idx[i]] {
                j += 1;
            }
            let mean = (i + j) as f64 / 2.0;
            for k in i..=j {
                r[idx[k]] = mean;
            }
            i = j + 1;
        }
        r
    }
    let n = a.len().min(b.len());
    if n < 2 {
        return 0.0;
    }
    let (ra, rb) = (ranks(&a[..n]), ranks(&b[..n]));
    let m = (n as f64 - 1.0) / 2.0;
    let cov: f64 = ra.iter().zip(&rb).map(|(x, y)| (x - m) * (y - m)).sum();
    let va: f64 = ra.iter().map(|x| (x - m).powi(2)).sum();
    let vb: f64 = rb.iter().map(|y| (y - m).powi(2)).sum();
    if va <= 0.0 || vb <= 0.0 {
        0.0
    } else {
        cov / (va * vb).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_a_smooth_function_and_is_repeatable() {
        let mut rng = StdRng::seed_from_u64(3);
        let xs: Vec<Vec<f64>> = (0..300)
            .map(|_| (0..3).map(|_| rng.random::<f64>()).collect())
            .collect();
        let f = |x: &[f64]| vec![2.0 * x[0] - x[1] + 0.5 * x[2] * x[2], (x[0] - 0.5).powi(2)];
        let ys: Vec<Vec<f64>> = xs.iter().map(|x| f(x)).collect();
        let spec = TrainSpec {
            epochs: 200,
            learning_rate: 3e-3,
            ..TrainSpec::default()
        };
        let net = Surrogate::train(&xs[..240], &ys[..240], spec).unwrap();
        let p = net.predict(&xs[240..]).unwrap();
        let truth: Vec<f64> = ys[240..].iter().map(|y| y[0]).collect();
        let pred: Vec<f64> = p.iter().map(|y| y[0]).collect();
        assert!(spearman(&truth, &pred) > 0.9, "{}", spearman(&truth, &pred));
        let again = Surrogate::train(&xs[..240], &ys[..240], spec).unwrap();
        assert_eq!(
            again.predict(&xs[240..]).unwrap(),
            p,
            "same seed, same network"
        );
        assert!(net.predict(&[vec![0.0; 2]]).is_err());
    }

    #[test]
    fn spearman_of_ranks() {
        assert!((spearman(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0]) - 1.0).abs() < 1e-12);
        assert!((spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]) + 1.0).abs() < 1e-12);
        assert_eq!(spearman(&[1.0, 1.0], &[1.0, 2.0]), 0.0);
    }
}
