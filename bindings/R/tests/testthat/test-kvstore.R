# KVStore: init, push, pull as MXNet R's demo writes them, with an optimizer as the updater.

test_that("init, push from two devices, pull: the store keeps the sum without an updater", {
  kv <- mx.kv.create("local")
  expect_true(is.mx.kvstore(kv))
  expect_equal(kv$type, "local")
  expect_equal(kv$rank, 0L)
  expect_equal(kv$num.workers, 1L)
  dlist <- lapply(1:2, function(i) list(x = mx.nd.array(c(i, i + 1), mx.cpu(i - 1))))
  kv$init(c(0), dlist[[1]])
  kv$push(c(0), dlist, 0)
  kv$pull(c(0), dlist, 0)
  expect_identical(as.array(dlist[[1]][[1]]), array(c(3, 5), 2))
  expect_identical(as.array(dlist[[2]][[1]]), array(c(3, 5), 2))
})

test_that("an SGD optimizer as the updater: weight -= lr * (sum of the pushed gradients)", {
  kv <- mx.kv.create("local")
  kv$init(c(3, 5), list(mx.nd.ones(c(2, 3)), mx.nd.zeros(4)))
  kv$set.optimizer(mx.opt.create("sgd", learning.rate = 0.1))
  grads <- list(list(mx.nd.ones(c(2, 3)), mx.nd.ones(4) * 2), list(mx.nd.ones(c(2, 3), mx.cpu(1)), mx.nd.ones(4, mx.cpu(1))))
  kv$push(c(3, 5), grads)
  out <- list(mx.nd.zeros(c(2, 3)), mx.nd.zeros(4))
  kv$pull(c(3, 5), list(out))
  expect_equal(as.array(out[[1]]), array(1 - 0.1 * 2, c(2, 3)), tolerance = 1e-7)
  expect_equal(as.array(out[[2]]), array(-0.1 * 3, 4), tolerance = 1e-7)
})

test_that("an R updater with state: momentum kept per key across pushes", {
  kv <- mx.kv.create("local")
  kv$init(7, mx.nd.zeros(2))
  seen <- integer()
  kv$set.optimizer(list(
    create.state = function(index, weight) mx.nd.zeros(dim(weight)),
    update = function(index, weight, grad, state) {
      seen <<- c(seen, index)
      state <- state * 0.5 + grad
      list(weight = weight - state, state = state)
    }))
  kv$push(7, mx.nd.array(c(1, 2)))
  kv$push(7, mx.nd.array(c(1, 2)))
  out <- mx.nd.zeros(2)
  kv$pull(7, out)
  # state: g, then 0.5 g + g; weight: -g - 1.5 g
  expect_identical(as.array(out), array(-2.5 * c(1, 2), 2))
  expect_identical(seen, c(7L, 7L))
})

test_that("bad use of a KVStore gives R errors, never a crash", {
  kv <- mx.kv.create("local")
  kv$init(1, mx.nd.ones(3))
  expect_error(kv$init(1, mx.nd.ones(3)), "1")
  expect_error(kv$push(2, mx.nd.ones(3)), "2")
  expect_error(kv$push(1, mx.nd.ones(4)), "shape")
  expect_error(kv$init(c(8, 9), list(mx.nd.ones(3))), "one MXNDArray per key")
  expect_error(mx.kv.create("no_such_store"), "no_such_store")
  kv$set.optimizer(list(create.state = function(index, weight) NULL,
                        update = function(index, weight, grad, state) stop("the updater fails on purpose")))
  expect_error(kv$push(1, mx.nd.ones(3)), "the updater fails on purpose")
  # the store is still usable afterwards
  kv$set.optimizer(mx.opt.create("sgd", learning.rate = 1))
  kv$push(1, mx.nd.ones(3))
  out <- mx.nd.zeros(3)
  kv$pull(1, out)
  expect_identical(as.array(out), array(0, 3))
})
