test_that("mx.model.save and mx.model.load keep MXNet's checkpoint layout", {
  net <- mx.symbol.FullyConnected(mx.symbol.Variable("data"), num.hidden = 2, name = "fc")
  net <- mx.symbol.BatchNorm(net, name = "bn")
  model <- structure(list(symbol = net,
                          arg.params = list(fc_weight = mx.nd.array(matrix(1:6, 3, 2)), fc_bias = mx.nd.array(c(1, 2)),
                                            bn_gamma = mx.nd.ones(2), bn_beta = mx.nd.zeros(2)),
                          aux.params = list(bn_moving_mean = mx.nd.zeros(2), bn_moving_var = mx.nd.ones(2))),
                     class = "MXFeedForwardModel")
  prefix <- file.path(tempdir(), "bn")
  mx.model.save(model, prefix, 3)
  expect_true(file.exists(paste0(prefix, "-symbol.json")))
  expect_true(file.exists(paste0(prefix, "-0003.params")))
  expect_setequal(names(mx.nd.load(paste0(prefix, "-0003.params"))),
                  c("arg:fc_weight", "arg:fc_bias", "arg:bn_gamma", "arg:bn_beta", "aux:bn_moving_mean", "aux:bn_moving_var"))
  back <- mx.model.load(prefix, 3)
  expect_equal(names(back$aux.params), c("bn_moving_mean", "bn_moving_var"))
  expect_identical(as.array(back$arg.params$fc_weight), as.array(model$arg.params$fc_weight))
  expect_equal(arguments(back$symbol), arguments(net))
  # R's own workspace form
  again <- mx.unserialize(unserialize(serialize(mx.serialize(back), NULL)))
  expect_identical(as.array(again$arg.params$fc_bias), array(c(1, 2), 2))
})

test_that("FeedForward.create learns from R arrays and predict gives one column per example", {
  mx.set.seed(1)
  n <- 200
  x <- rbind(matrix(rnorm(n, -2), ncol = 2), matrix(rnorm(n, 2), ncol = 2))
  y <- rep(0:1, each = n / 2)
  data <- mx.symbol.Variable("data")
  net <- mx.symbol.SoftmaxOutput(mx.symbol.FullyConnected(data, num_hidden = 2, name = "fc"), name = "softmax")
  logger <- mx.metric.logger()
  model <- suppressMessages(mx.model.FeedForward.create(
    net, X = x, y = y, ctx = mx.cpu(), num.round = 5, array.batch.size = 20, learning.rate = 0.1, momentum = 0.9,
    eval.metric = mx.metric.accuracy, array.layout = "rowmajor",
    epoch.end.callback = mx.callback.log.train.metric(1, logger)))
  expect_s3_class(model, "MXFeedForwardModel")
  expect_equal(names(model$arg.params), c("fc_weight", "fc_bias"))
  expect_length(logger$train, 5)
  expect_gt(logger$train[5], 0.95)
  pred <- predict(model, x, array.layout = "rowmajor")
  expect_equal(dim(pred), c(2L, 200L))
  expect_gt(mean(max.col(t(pred)) - 1 == y), 0.95)
  expect_equal(colSums(pred), rep(1, 200), tolerance = 1e-5)
})

test_that("data-parallel training on two devices, updating on the KVStore or on each device", {
  mx.set.seed(2)
  x <- rbind(matrix(rnorm(200, -2), ncol = 2), matrix(rnorm(200, 2), ncol = 2))
  y <- rep(0:1, each = 100)
  net <- mx.symbol.SoftmaxOutput(mx.symbol.FullyConnected(mx.symbol.Variable("data"), num_hidden = 2, name = "fc"),
                                 name = "softmax")
  for (kv in list("local", mx.kv.create("local_allreduce_cpu"))) {
    logger <- mx.metric.logger()
    model <- suppressMessages(mx.model.FeedForward.create(
      net, X = x, y = y, ctx = list(mx.cpu(0), mx.cpu(1)), num.round = 4, array.batch.size = 20, learning.rate = 0.1,
      momentum = 0.9, eval.metric = mx.metric.accuracy, array.layout = "rowmajor", kvstore = kv,
      epoch.end.callback = mx.callback.log.train.metric(1, logger)))
    expect_gt(logger$train[4], 0.95)
    expect_gt(mean(max.col(t(predict(model, x, array.layout = "rowmajor"))) - 1 == y), 0.95)
  }
})

test_that("FeedForward.create trains the MNIST MLP on Fashion-MNIST to train_mnist's accuracy", {
  skip_without_fmnist()
  train.mnist <- weft.program("WEFT_TRAIN_MNIST")
  epochs <- 2
  prefix <- file.path(tempdir(), "cpp-mlp")
  log <- system2(train.mnist, c("--network", "mlp", "--epochs", epochs, "--model-prefix", prefix), stdout = TRUE,
                 stderr = TRUE, timeout = 600)
  expect_null(attr(log, "status"))
  cpp <- as.numeric(sub(".*Validation-accuracy=([0-9.]+).*", "\\1", tail(grep("Validation-accuracy=", log, value = TRUE), 1)))
  # The same network, initializer, optimizer and batch as train_mnist (MXNet's fit.py defaults).
  train <- mx.io.MNISTIter(image = fmnist.file("train-images-idx3-ubyte.gz"), label = fmnist.file("train-labels-idx1-ubyte.gz"),
                           batch.size = 100, shuffle = TRUE, flat = TRUE, seed = 0)
  test <- mx.io.MNISTIter(image = fmnist.file("t10k-images-idx3-ubyte.gz"), label = fmnist.file("t10k-labels-idx1-ubyte.gz"),
                          batch.size = 100, shuffle = FALSE, flat = TRUE)
  mx.set.seed(0)
  logger <- mx.metric.logger()
  model <- mx.model.FeedForward.create(
    mlp.symbol(), X = train, eval.data = test, ctx = mx.cpu(), num.round = epochs,
    optimizer = "sgd", learning.rate = 0.05, momentum = 0.9, eval.metric = mx.metric.accuracy,
    initializer = mx.init.Xavier(rnd_type = "gaussian", factor_type = "in", magnitude = 2),
    epoch.end.callback = mx.callback.log.train.metric(100, logger))
  r <- logger$eval[epochs]
  message(sprintf("Fashion-MNIST MLP after %d epochs: R %.4f, train_mnist %.4f", epochs, r, cpp))
  # Different seeds of one program spread by about 0.01 after 2 epochs (README).
  expect_gt(r, cpp - 0.02)
  expect_gt(r, 0.8)
})

test_that("a checkpoint written by train_mnist predicts in R as in predict_mnist and in R's own arithmetic", {
  skip_without_fmnist()
  train.mnist <- weft.program("WEFT_TRAIN_MNIST")
  predict.mnist <- weft.program("WEFT_PREDICT_MNIST")
  prefix <- file.path(tempdir(), "cpp-ckpt")
  log <- system2(train.mnist, c("--network", "mlp", "--epochs", 1, "--model-prefix", prefix), stdout = TRUE, stderr = TRUE,
                 timeout = 600)
  expect_null(attr(log, "status"))
  cpp <- system2(predict.mnist, c("--model-prefix", prefix, "--epoch", 1), stdout = TRUE, stderr = TRUE, timeout = 300)
  cpp.accuracy <- sub(".*test accuracy ([0-9.]+) .*", "\\1", grep("test accuracy", cpp, value = TRUE))
  model <- mx.model.load(prefix, 1)
  expect_setequal(names(model$arg.params), c("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias", "fc3_weight", "fc3_bias"))
  test <- mx.io.MNISTIter(image = fmnist.file("t10k-images-idx3-ubyte.gz"), label = fmnist.file("t10k-labels-idx1-ubyte.gz"),
                          batch.size = 100, shuffle = FALSE, flat = TRUE)
  prob <- predict(model, test)
  expect_equal(dim(prob), c(10L, 10000L))
  ref <- read.idx(fmnist.file("t10k-images-idx3-ubyte.gz"), fmnist.file("t10k-labels-idx1-ubyte.gz"), 10000)
  expect_identical(sprintf("%.4f", mean(max.col(t(prob), ties.method = "first") - 1 == ref$y)), cpp.accuracy)
  # The MLP in base R, in double precision, from the loaded parameters (R dim c(in, out)).
  p <- lapply(model$arg.params, as.array)
  relu <- function(z) pmax(z, 0)
  h1 <- relu(t(p$fc1_weight) %*% ref$x + as.vector(p$fc1_bias))
  h2 <- relu(t(p$fc2_weight) %*% h1 + as.vector(p$fc2_bias))
  z <- t(p$fc3_weight) %*% h2 + as.vector(p$fc3_bias)
  e <- exp(sweep(z, 2, apply(z, 2, max)))
  base <- sweep(e, 2, colSums(e), "/")
  expect_lt(max(abs(prob - base)), 1e-4)
  # the same class for every image (but where the two best classes tie to within float32 rounding)
  top <- function(m) max.col(t(m), ties.method = "first")
  differ <- which(top(prob) != top(base))
  gaps <- vapply(differ, function(j) diff(sort(base[, j], decreasing = TRUE)[2:1]), 0)
  expect_true(all(gaps < 1e-5))
})
