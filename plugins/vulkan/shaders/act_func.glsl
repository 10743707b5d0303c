// The element-wise activations of Activation and LeakyReLU with their derivatives, as the CPU
// plugin computes them (MXNet 1.9). Codes: 0 relu, 1 sigmoid, 2 tanh, 3 softrelu, 4 softsign,
// 5 leaky, 6 elu, 7 selu, 8 gelu. GLSL has neither expm1 nor erf: Expm1 uses the tanh identity
// near 0 (where exp(v) - 1 loses the digits), Erf is Abramowitz and Stegun 7.1.26 (absolute
// error below 1.5e-7).
const float kSeluAlpha = 1.6732632423543772;
const float kSeluLambda = 1.0507009873554805;

float Expm1(float v) {
  if (abs(v) >= 0.5) return exp(v) - 1.0;
  const float t = tanh(0.5 * v);
  return 2.0 * t / (1.0 - t);
}

float Erf(float v) {
  const float a = abs(v), t = 1.0 / (1.0 + 0.3275911 * a);
  const float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return sign(v) * (1.0 - poly * exp(-a * a));
}

float ActForward(int act, float v, float slope) {
  if (act == 0) return max(v, 0.0);
  if (act == 1) return 1.0 / (1.0 + exp(-v));
  if (act == 2) return tanh(v);
  if (act == 3) return v > 20.0 ? v : log(1.0 + exp(v));  // softrelu, overflow-safe
  if (act == 4) return v / (1.0 + abs(v));
  if (act == 5) return v > 0.0 ? v : slope * v;
  if (act == 6) return v > 0.0 ? v : slope * Expm1(v);
  if (act == 7) return kSeluLambda * (v > 0.0 ? v : kSeluAlpha * Expm1(v));
  return 0.5 * v * (1.0 + Erf(v * 0.70710678118654752));  // gelu, the erf form
}

// f' at input xv with output yv.
float ActDerivative(int act, float xv, float yv, float slope) {
  if (act == 0) return yv > 0.0 ? 1.0 : 0.0;
  if (act == 1) return yv * (1.0 - yv);
  if (act == 2) return 1.0 - yv * yv;
  if (act == 3) return -Expm1(-yv);
  if (act == 4) {
    const float a = 1.0 + abs(xv);
    return 1.0 / (a * a);
  }
  if (act == 5) return xv > 0.0 ? 1.0 : slope;
  if (act == 6) return xv > 0.0 ? 1.0 : yv + slope;
  if (act == 7) return xv > 0.0 ? kSeluLambda : kSeluLambda * (yv + kSeluAlpha);  // MXNet 1.9's selu_grad
  return 0.5 * (1.0 + Erf(xv * 0.70710678118654752)) + xv * 0.3989422804014327 * exp(-0.5 * xv * xv);
}
