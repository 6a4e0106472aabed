fn main() {
    launch_build::build()
}
