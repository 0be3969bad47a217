// Hand-written for the fuzzer: aliases of both kinds, every location form, attribute and
// property dicts, alignment, dynamic sizes, statement-form and generic allocas, loops.
#loc1 = loc("model/layers.py":41:7)
#loc2 = loc("dense"(#loc1))
#loc3 = loc(callsite(#loc2 at "model/train.py":12:3))
!E = vector<4xf32>
!S = memref<8x!E, 201>
module attributes {stable_mosaic.version = 11 : i64} {
  func.func @kernel(%arg0: memref<64xf32, 203>, %n: index) attributes {tpu.core_type = #tpu.core_type<sc_vector_subcore>, scratch_operands = 0 : i64} {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %a = memref.alloca() {alignment = 64 : i64} : memref<4x8xf32, 201> loc(#loc1)
    %b = memref.alloca(%c16) : memref<?x2xbf16, 201> loc(#loc3)
    %c = memref.alloca() : memref<2x!E, 202> loc(fused["model/a.py":1:2, "model/b.py":3:4])
    %d = memref.alloca() : !S loc("scratch"("model/c.py":5:6))
    %e = memref.alloca() : memref<3xi1, #tpu.memory_space<vmem>>
    %f = memref.alloca() : memref<2x3xvector<[4]xf32>, 201>
    scf.for %i = %c0 to %c16 step %c4 {
      %g = memref.alloca() : memref<16xi32, 201> loc(#loc2)
      %h = "memref.alloca"() <{operandSegmentSizes = array<i32: 0, 0>}> {alignment = 32 : i64} : () -> memref<5x5xf16, 201> loc(#loc1)
      %v = arith.constant 7 : i32
      memref.store %v, %g[%c0] : memref<16xi32, 201>
    }
    "tpu.region"() ({
      %k = "memref.alloca"(%n) <{operandSegmentSizes = array<i32: 1, 0>}> : (index) -> memref<?xf32, 201>
      memref.alloca_scope {
        %m = memref.alloca() : memref<7xi8, 201> loc(#loc3)
      }
      "tpu.yield"() : () -> ()
    }) : () -> ()
    return
  }
  func.func private @other() {
    %z = memref.alloca() : memref<1000000x1000000xf64, 203>
    return
  }
}
