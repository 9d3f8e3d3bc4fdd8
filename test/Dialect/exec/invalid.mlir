// RUN: infer-opt --split-input-file --verify-diagnostics %s

// Tests that a program needs its arena.
// expected-error @+1 {{'exec.program' op needs exactly one exec.arena, found 0}}
exec.program @no_arena {
  exec.return
}

// -----

// Tests that a program has only one arena.
// expected-error @+1 {{'exec.program' op needs exactly one exec.arena, found 2}}
exec.program @two_arenas {
  %a = exec.arena
  %b = exec.arena
  exec.return
}

// -----

// Tests that a planned buffer must fit in the arena at the bound.
exec.program @past_the_arena {
  %arena = exec.arena size #exec.affine<0 * T + 1024> {bound_tokens = 4 : i64}
  // expected-error @+1 {{'exec.buffer' op ends at byte 1280 at T = 4, past the arena's 1024 bytes}}
  %a = exec.buffer %arena [#exec.affine<0 * T + 256>] size #exec.affine<256 * T + 0> of f32
  exec.return
}

// -----

// Tests that byte counts are non-negative.
exec.program @negative_size {
  %arena = exec.arena
  // expected-error @+1 {{byte counts are non-negative, got -4 * T + 0}}
  %a = exec.buffer %arena size #exec.affine<-4 * T + 0> of f32
  exec.return
}

// -----

// Tests that a launch cannot write a weight.
exec.program @write_weight {
  %arena = exec.arena
  %x = exec.buffer %arena size #exec.affine<256 * T + 0> of f32
  %w = exec.weight "norm" : tensor<64xf32>
  // expected-error @+1 {{'exec.rms_norm' op writes a buffer that is not an exec.buffer of the arena}}
  exec.rms_norm %x, %w -> %w {epsilon = 1.0e-6 : f32, features = 64 : i64}
  exec.return
}

// -----

// Tests that an elementwise kernel yields one value per output buffer.
exec.program @yield_count {
  %arena = exec.arena
  %x = exec.buffer %arena size #exec.affine<256 * T + 0> of f32
  %y = exec.buffer %arena size #exec.affine<256 * T + 0> of f32
  // expected-error @+1 {{'exec.elementwise' op yields 2 values for 1 output buffers}}
  exec.elementwise ins(%x) outs(%y) {
  ^bb0(%a: tensor<?x?x64xf32>):
    exec.yield %a, %a : tensor<?x?x64xf32>, tensor<?x?x64xf32>
  }
  exec.return
}

// -----

// Tests that a program ends with exec.return.
// expected-error @+1 {{'exec.program' op must end with exec.return}}
exec.program @no_return {
  %arena = exec.arena
}

// -----

// Tests that a launch lives directly in a program.
func.func @launch_outside(%x: tensor<4xf32>) {
  %c = exec.constant dense<1.0> : tensor<4xf32>
  // expected-error @+1 {{'exec.rms_norm' op expects parent op 'exec.program'}}
  exec.rms_norm %c, %c -> %c {epsilon = 1.0e-6 : f32, features = 4 : i64}
  return
}
