test_that("variables, arithmetic, arguments and outputs", {
  a <- mx.symbol.Variable("a")
  b <- mx.symbol.Variable("b")
  c <- 2 * a + b
  expect_true(is.mx.symbol(c))
  expect_equal(arguments(c), c("a", "b"))
  expect_equal(c$arguments, c("a", "b"))
  expect_length(outputs(c), 1)
  d <- (a - 1) / (3 - b) * a
  expect_equal(arguments(d), c("a", "b"))
})

test_that("operator functions take the op's arguments, dotted or with underscores", {
  data <- mx.symbol.Variable("data")
  fc <- mx.symbol.FullyConnected(data, num.hidden = 10, name = "fc1")
  expect_equal(arguments(fc), c("data", "fc1_weight", "fc1_bias"))
  fc2 <- mx.symbol.FullyConnected(data = data, num_hidden = 10, no_bias = TRUE, name = "fc2")
  expect_equal(arguments(fc2), c("data", "fc2_weight"))
  expect_equal(outputs(fc2), "fc2_output")
  expect_true(all(c("data", "weight", "bias", "num.hidden", "no.bias", "name") %in%
                    names(formals(mx.symbol.FullyConnected))))
  # automatic names: the op's name in lower case and a counter
  auto <- mx.symbol.Activation(data, act_type = "relu")
  expect_match(outputs(auto), "^activation[0-9]+_output$")
})

test_that("infer.shape gives R dims (MXNet's shapes reversed)", {
  net <- mx.symbol.FullyConnected(mx.symbol.Variable("data"), num.hidden = 10, name = "fc")
  s <- mx.symbol.infer.shape(net, data = c(784, 32))
  expect_equal(s$arg.shapes$fc_weight, c(784L, 10L))
  expect_equal(s$arg.shapes$fc_bias, 10L)
  expect_equal(s$out.shapes$fc_output, c(10L, 32L))
  expect_null(mx.symbol.infer.shape(mx.symbol.Variable("x") + mx.symbol.Variable("y")))
  bn <- mx.symbol.BatchNorm(mx.symbol.Variable("data"), name = "bn")
  # data of R dim c(3, 5): MXNet shape (5, 3), a batch of 5 with 3 channels
  s <- bn$infer.shape(list(data = c(3, 5)))
  expect_equal(names(s$aux.shapes), c("bn_moving_mean", "bn_moving_var"))
  expect_equal(s$aux.shapes$bn_moving_mean, 3L)
})

test_that("internals, outputs by index from 1, groups, JSON and files", {
  data <- mx.symbol.Variable("data")
  fc <- mx.symbol.FullyConnected(data, num.hidden = 4, name = "fc")
  net <- mx.symbol.Activation(fc, act.type = "relu", name = "relu")
  internals <- net$get.internals()
  expect_true("fc_output" %in% outputs(internals))
  expect_equal(outputs(internals[["fc_output"]]), "fc_output")
  expect_equal(outputs(internals[[1]]), outputs(internals)[1])
  expect_error(internals[[0]], "numbered from 1")
  g <- mx.symbol.Group(fc, net)
  expect_equal(outputs(g), c("fc_output", "relu_output"))
  back <- mx.symbol.load.json(net$as.json())
  expect_equal(arguments(back), arguments(net))
  f <- tempfile(fileext = ".json")
  mx.symbol.save(net, f)
  expect_equal(outputs(mx.symbol.load(f)), outputs(net))
  # a composed symbol takes its inputs by argument name (MXNet's Compose)
  applied <- mx.apply(mx.symbol.FullyConnected(num.hidden = 2, name = "late"), late_data = mx.symbol.Variable("x"))
  expect_equal(arguments(applied), c("x", "late_weight", "late_bias"))
})

test_that("bad use of symbols gives R errors naming the problem", {
  data <- mx.symbol.Variable("data")
  expect_error(mx.symbol.FullyConnected(data, num_hidden = 3, foo = 2), "'foo'")
  expect_error(mx.symbol.FullyConnected(data, num_hidden = 3, foo = 2), "mx.symbol.FullyConnected")
  expect_error(mx.symbol.FullyConnected(data, 3), "input 'weight' must be an MXSymbol, not numeric")
  expect_error(mx.symbol.Activation(data, act_type = "relu", mx.symbol.Variable("w")), "give attributes as name = value")
  expect_error(mx.symbol.FullyConnected(data = 5, num_hidden = 3), "input 'data' must be an MXSymbol")
  expect_error(mx.symbol.Activation(data, act_type = "nope"), "nope")
  expect_error(mx.symbol.infer.shape(data + 1, dta = c(2, 3)), "'dta' is not an argument")
  expect_error(data$no.such.field, "no field")
  expect_error(mx.symbol.Variable(""), "non-empty")
})
